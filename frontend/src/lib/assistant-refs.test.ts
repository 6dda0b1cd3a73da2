import { describe, expect, it } from 'vitest';
import { askedForIds, holdBack, mergeRefs, plainTitles, questionFor, recordOptions, refLabels, refsFor, type Ref } from './assistant-refs';
import { recordHref } from './assistant';
import { renderMarkdown } from './markdown';

const T1: Ref = { kind: 'task', id: 'tsk_0123456789abcdef', title: 'Draft brief' };
const T2: Ref = { kind: 'task', id: 'tsk_fedcba9876543210', title: 'Call Mira' };
const P1: Ref = { kind: 'person', id: 'per_00000000000000aa', title: 'Mira Chen' };
const refs = [T1, T2, P1];

const md = (text: string, question = '', known: Ref[] = refs) => renderMarkdown(text, recordOptions(known, question, recordHref));

describe('mergeRefs', () => {
  it('keeps each id once, the first list winning, and drops records without an id or title', () => {
    const got = mergeRefs([T1, { kind: 'task', id: '', title: 'x' }], [{ ...T1, title: 'Old' }, T2, { kind: 'task', id: 'tsk_2', title: ' ' }], null, undefined);
    expect(got).toEqual([T1, T2]);
  });
});

describe('refsFor and questionFor', () => {
  const messages = [
    { role: 'user', text: 'Add Draft brief' },
    { role: 'assistant', text: 'Done', tools: [{ refs: [T1] }] },
    { role: 'user', text: 'what are their ids?' },
    { role: 'assistant', text: 'x', refs: [T2], tools: [{ refs: null }] },
  ];
  it('gathers the message own refs first, then the conversation, then what this window learnt', () => {
    expect(refsFor(messages, 3, [P1]).map((r) => r.id)).toEqual([T2.id, T1.id, P1.id]);
    expect(refsFor(messages, 1).map((r) => r.id)).toEqual([T1.id, T2.id]);
  });
  it('reads records saved on a message as mentions', () => {
    expect(refsFor([{ role: 'assistant', mentions: [{ kind: 'task', id: T1.id, label: 'Draft brief' }] }], 0)).toEqual([T1]);
  });
  it('finds the question a reply answers', () => {
    expect(questionFor(messages, 3)).toBe('what are their ids?');
    expect(questionFor(messages, 1)).toBe('Add Draft brief');
    expect(questionFor(messages, 0)).toBe('');
  });
});

describe('askedForIds', () => {
  it.each([
    ['What is its id?', true],
    ['list the IDs', true],
    ['give me the uuid', true],
    ['the identifier please', true],
    ['I did this', false],
    ['ideas for the brief', false],
  ])('%s', (q, want) => expect(askedForIds(q)).toBe(want));
});

describe('refLabels', () => {
  it('tells apart records that share a title', () => {
    const l = refLabels([
      { kind: 'task', id: 'a', title: 'Launch' },
      { kind: 'project', id: 'b', title: 'Launch' },
      { kind: 'task', id: 'c', title: 'Notes' },
      { kind: 'task', id: 'd', title: 'notes' },
    ]);
    expect(l.get('a')?.title).toBe('Launch (task)');
    expect(l.get('b')?.title).toBe('Launch (project)');
    expect(l.get('c')?.title).toBe('Notes (1)');
    expect(l.get('d')?.title).toBe('notes (2)');
  });
});

describe('a reply with refs, rendered', () => {
  it('shows a bare known id as its title, linked to the task page', () => {
    expect(md(`I added ${T1.id}.`)).toBe(`<p>I added <a href="#/task/${T1.id}" class="record-link" data-kind="task">Draft brief</a>.</p>`);
  });
  it('links a record link to the task page and never keeps the ensemble:// scheme', () => {
    const html = md(`See [the brief](ensemble://task/${T1.id}) and [@Mira Chen](ensemble://person/${P1.id}).`);
    expect(html).toBe(`<p>See <a href="#/task/${T1.id}" class="record-link" data-kind="task">the brief</a> and Mira Chen.</p>`);
    expect(html).not.toContain('ensemble:');
  });
  it('a record with no page shows its title without a link', () => {
    expect(md(`Assigned to ${P1.id}`)).toBe('<p>Assigned to Mira Chen</p>');
  });
  it('Title (id), “Title” (id) and Title (ensemble://…) link the title once', () => {
    const a = `<a href="#/task/${T1.id}" class="record-link" data-kind="task">Draft brief</a>`;
    expect(md(`Added Draft brief (${T1.id}) today`)).toBe(`<p>Added ${a} today</p>`);
    expect(md(`Added “Draft brief” (${T1.id}).`)).toBe(`<p>Added ${a}.</p>`);
    expect(md(`Added "Draft brief" (${T1.id}).`)).toBe(`<p>Added ${a}.</p>`);
    expect(md(`Added Draft brief (ensemble://task/${T1.id}).`)).toBe(`<p>Added ${a}.</p>`);
  });
  it('the first clause of a title counts as the title', () => {
    const t: Ref = { kind: 'task', id: 'tsk_1111111111111111', title: 'Call Mira: budget and dates' };
    expect(md(`Then Call Mira (${t.id}).`, '', [t])).toBe(`<p>Then <a href="#/task/${t.id}" class="record-link" data-kind="task">Call Mira</a>.</p>`);
  });
  it('a bare handle shows its title', () => {
    expect(md(`Open ensemble://task/${T2.id}.`)).toBe(`<p>Open <a href="#/task/${T2.id}" class="record-link" data-kind="task">Call Mira</a>.</p>`);
  });
  it('leaves ids in code, code blocks, URLs and link targets alone', () => {
    expect(md(`\`${T1.id}\``)).toBe(`<p><code>${T1.id}</code></p>`);
    expect(md('```\n' + T1.id + '\n```')).toBe(`<pre><code>${T1.id}</code></pre>`);
    expect(md(`https://example.com/${T1.id}`)).toBe(`<p>https://example.com/${T1.id}</p>`);
    expect(md(`[site](https://example.com/${T1.id})`)).toContain(`href="https://example.com/${T1.id}"`);
  });
  it('keeps ids when the question asked for them', () => {
    expect(md(`It is ${T1.id}.`, 'what is the id of Draft brief?')).toBe(`<p>It is ${T1.id}.</p>`);
    // A record link still shows its title.
    expect(md(`[Draft brief](ensemble://task/${T1.id})`, 'ids?')).toContain('>Draft brief</a>');
  });
  it('leaves an unknown id, but drops one in brackets after a quoted title', () => {
    expect(md('See tsk_9999999999999999 now')).toBe('<p>See tsk_9999999999999999 now</p>');
    expect(md('Added “Old task” (tsk_9999999999999999).')).toBe('<p>Added “Old task”.</p>');
    expect(md('A “quote” (word) stays')).toBe('<p>A “quote” (word) stays</p>');
  });
  it('escapes titles: a title cannot inject HTML', () => {
    const evil: Ref = { kind: 'task', id: 'tsk_2222222222222222', title: '<img src=x onerror=alert(1)> & "q"' };
    const html = md(`See ${evil.id}`, '', [evil]);
    expect(html).not.toContain('<img');
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt; &amp; &quot;q&quot;');
  });
  it('a hostile id or kind never reaches an attribute raw', () => {
    const html = md('[x](ensemble://task/a"onclick=1) [y](ensemble://javascript/alert) [z](javascript:alert(1))');
    expect(html).not.toMatch(/href="(?!#\/)/);
    expect(html).not.toContain('onclick=1"');
  });
  it('does not touch words or snake_case that are not known ids', () => {
    expect(md('the snake_case word and abc')).toBe('<p>the snake_case word and abc</p>');
  });
  it('emphasis still works around titles', () => {
    expect(md(`**Done:** ${T2.id}`)).toBe(`<p><strong>Done:</strong> <a href="#/task/${T2.id}" class="record-link" data-kind="task">Call Mira</a></p>`);
  });
});

describe('holdBack', () => {
  it.each([
    ['a half-written known id', `I added tsk_0123`, 'I added '],
    ['a whole known id', `I added ${T1.id}`, `I added ${T1.id}`],
    ['a word that is no id prefix', 'I added tea', 'I added tea'],
    ['an open record link label', 'See [Draft br', 'See '],
    ['a record link without its target yet', 'See [Draft brief](ensemble://task/tsk_01', 'See '],
    ['a link label closed, target not started', 'See [Draft brief]', 'See '],
    ['a web link being written is not held', 'See [docs](https://exa', 'See [docs](https://exa'],
    ['a finished link', 'See [Draft brief](ensemble://task/x) now', 'See [Draft brief](ensemble://task/x) now'],
    ['a bare handle', 'Open ensemble://task/tsk_01', 'Open '],
    ['the start of a handle', 'Open (ensem', 'Open ('],
  ])('%s', (_n, text, want) => expect(holdBack(text, refs)).toBe(want));
});

describe('plainTitles', () => {
  it('shows titles for ids and labels for record links, without links', () => {
    expect(plainTitles(`Moved ${T1.id} to Done`, refs)).toBe('Moved Draft brief to Done');
    expect(plainTitles(`Moved “Draft brief” (${T1.id}) to Done`, refs)).toBe('Moved “Draft brief” to Done');
    expect(plainTitles(`Moved Draft brief (${T1.id})`, refs)).toBe('Moved Draft brief');
    expect(plainTitles(`Records: [Call Mira](ensemble://task/${T2.id})`, refs)).toBe('Records: Call Mira');
    expect(plainTitles(`Open ensemble://person/${P1.id}`, refs)).toBe('Open Mira Chen');
    expect(plainTitles(`Keep ${T1.id}`, refs, true)).toBe(`Keep ${T1.id}`);
    expect(plainTitles('Nothing known tsk_9999999999999999', refs)).toBe('Nothing known tsk_9999999999999999');
  });
});
