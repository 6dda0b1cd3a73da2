import { describe, expect, it } from 'vitest';
import {
  applyRecordEvent,
  changes,
  firstLine,
  formOf,
  formProblem,
  KINDS,
  matches,
  pageTree,
  parentChoices,
  RECORD_EVENT_KINDS,
  type AnyRecord,
  type PageRecord,
} from './records';

const P = KINDS.projects;
const proj = (id: string, name: string, extra: Record<string, unknown> = {}): AnyRecord => ({
  id,
  name,
  summary: '',
  status: 'active',
  notes: '',
  ...extra,
});
const page = (id: string, title: string, parentId: string | null = null): PageRecord => ({ id, title, body: '', parentId });

describe('applyRecordEvent', () => {
  const list = [proj('prj_b', 'Beta'), proj('prj_d', 'Delta')];

  it('puts a created record in name order', () => {
    const got = applyRecordEvent(P, list, { kind: 'project.created', data: proj('prj_c', 'charlie') });
    expect(got.map((r) => r.id)).toEqual(['prj_b', 'prj_c', 'prj_d']);
    expect(list).toHaveLength(2);
  });

  it('replaces an updated one and re-sorts', () => {
    const got = applyRecordEvent(P, list, { kind: 'project.updated', data: proj('prj_d', 'Alpha') });
    expect(got.map((r) => r.name)).toEqual(['Alpha', 'Beta']);
  });

  it('takes out a trashed or purged one, and brings a restored one back', () => {
    const trashed = applyRecordEvent(P, list, { kind: 'project.trashed', data: proj('prj_b', 'Beta', { deletedAt: '2025-01-01T00:00:00Z' }) });
    expect(trashed.map((r) => r.id)).toEqual(['prj_d']);
    expect(applyRecordEvent(P, list, { kind: 'project.purged', data: { id: 'prj_d' } }).map((r) => r.id)).toEqual(['prj_b']);
    expect(applyRecordEvent(P, trashed, { kind: 'project.restored', data: proj('prj_b', 'Beta') }).map((r) => r.id)).toEqual(['prj_b', 'prj_d']);
  });

  it('leaves the list alone for other kinds and bad data', () => {
    expect(applyRecordEvent(P, list, { kind: 'person.created', data: proj('per_1', 'Mira') })).toBe(list);
    expect(applyRecordEvent(P, list, { kind: 'project.created', data: 'nope' })).toBe(list);
    expect(applyRecordEvent(P, list, { kind: 'project.exploded', data: proj('prj_x', 'X') })).toBe(list);
  });

  it('follows every kind the screens show', () => {
    expect(RECORD_EVENT_KINDS).toContain('repo.trashed');
    expect(RECORD_EVENT_KINDS).toContain('person.restored');
    expect(RECORD_EVENT_KINDS).toContain('page.purged');
  });
});

describe('forms', () => {
  it('starts a new project active, and sends only what was filled in', () => {
    const f = formOf(P, null);
    expect(f).toEqual({ name: '', status: 'active', summary: '', notes: '' });
    f.name = '  Greenhouse  ';
    expect(changes(P, null, f)).toEqual({ name: 'Greenhouse', status: 'active' });
  });

  it('sends only the changed fields of an edit, keeping a Markdown body as typed', () => {
    const r = proj('prj_1', 'Greenhouse', { notes: '# Plan' });
    const f = formOf(P, r);
    expect(changes(P, r, f)).toEqual({});
    f.notes = '# Plan\n\n- vents  ';
    f.status = 'paused';
    expect(changes(P, r, f)).toEqual({ notes: '# Plan\n\n- vents  ', status: 'paused' });
  });

  it("sends a page's parent as null when it is taken out", () => {
    const r = page('pag_2', 'Child', 'pag_1') as unknown as AnyRecord;
    const f = formOf(KINDS.pages, r);
    expect(f.parentId).toBe('pag_1');
    f.parentId = '';
    expect(changes(KINDS.pages, r, f)).toEqual({ parentId: null });
  });

  it('says what is wrong in one sentence', () => {
    expect(formProblem(P, { name: ' ', status: 'active' })).toBe('A project needs a name.');
    expect(formProblem(KINDS.people, { name: 'Mira', email: 'mira at home' })).toBe('“mira at home” is not an email address.');
    expect(formProblem(KINDS.people, { name: 'x'.repeat(201) })).toBe('The name is longer than 200 characters.');
    expect(formProblem(KINDS.people, { name: 'Mira', email: 'mira@example.com' })).toBe('');
  });
});

describe('pages', () => {
  const pages = [page('c', 'Zeta', 'a'), page('a', 'Alpha'), page('b', 'Beta'), page('d', 'Eta', 'c'), page('e', 'Lost', 'gone')];

  it('lists them as a tree', () => {
    expect(pageTree(pages).map((x) => `${x.depth}:${x.page.title}`)).toEqual(['0:Alpha', '1:Zeta', '2:Eta', '0:Beta', '0:Lost']);
  });

  it('keeps pages in a cycle visible', () => {
    const got = pageTree([page('x', 'X', 'y'), page('y', 'Y', 'x')]);
    expect(got.map((x) => x.page.id).sort()).toEqual(['x', 'y']);
  });

  it('never offers a page itself or what is inside it as its parent', () => {
    expect(parentChoices(pages, 'a').map((p) => p.id)).toEqual(['b', 'e']);
    expect(parentChoices(pages, null)).toHaveLength(5);
  });

  it("shows a body's first line as plain words", () => {
    expect(firstLine('\n\n## Release *steps*\nmore')).toBe('Release steps');
    expect(firstLine('- `make` it')).toBe('make it');
    expect(firstLine('')).toBe('');
  });
});

describe('matches', () => {
  it('finds every word in any text field', () => {
    const r = { id: 'per_1', name: 'Mira Okafor', email: 'mira@example.com', role: 'Designer', team: '', relationship: '', notes: '' };
    expect(matches(KINDS.people, r, 'mira design')).toBe(true);
    expect(matches(KINDS.people, r, 'mira engineer')).toBe(false);
    expect(matches(KINDS.people, r, '  ')).toBe(true);
  });
});
