import { describe, expect, it } from 'vitest';
import {
  ago,
  applyNeedEvent,
  documentTitle,
  dropNeed,
  fromList,
  needTitle,
  openCount,
  settledNote,
  touchesList,
  type Decision,
  type NeedItem,
} from './needs';

const dec = (id: string, over: Partial<Decision> = {}): Decision => ({
  id,
  kind: 'permission',
  source: { runId: 'job_1', title: 'Make a file' },
  call: 'touch made.txt',
  options: ['Allow once', 'Allow for this run', 'Refuse'],
  recommended: 2,
  freeText: false,
  created: `2025-01-0${id.slice(-1)}T00:00:00Z`,
  status: 'open',
  ...over,
});
const ids = (items: readonly NeedItem[]) => items.map((x) => x.d.id);

describe('the list', () => {
  it('keeps open decisions, newest first', () => {
    const list = fromList([dec('n1'), dec('n3'), dec('n2', { status: 'answered' }), dec('n4')]);
    expect(ids(list)).toEqual(['n4', 'n3', 'n1']);
  });

  it.each([
    [0, 'Ensemble'],
    [1, '(1) Ensemble'],
    [12, '(12) Ensemble'],
  ])('documentTitle(%i) → %s', (n, want) => expect(documentTitle(n)).toBe(want));

  it('needTitle and touchesList', () => {
    expect(needTitle(dec('n1'))).toBe('touch made.txt');
    expect(needTitle(dec('n1', { kind: 'question', question: 'Which?' }))).toBe('Which?');
    expect(touchesList({ programs: ['touch'], writes: ['/x/made.txt'], reads: [] })).toEqual([
      { label: 'Runs', items: ['touch'] },
      { label: 'Writes', items: ['/x/made.txt'] },
    ]);
    expect(touchesList(undefined)).toEqual([]);
  });

  it.each([
    ['2025-01-01T00:00:10Z', 'just now'],
    ['2025-01-01T00:05:00Z', '5 min ago'],
    ['2025-01-01T03:00:00Z', '3 h ago'],
    ['2025-01-03T00:00:00Z', '2 d ago'],
    ['nonsense', ''],
  ])('ago(%s)', (iso, want) => {
    const now = Date.parse(iso) || 0;
    expect(ago(iso === 'nonsense' ? iso : '2025-01-01T00:00:00Z', now)).toBe(want);
  });
});

describe('applyNeedEvent', () => {
  const base = fromList([dec('n1'), dec('n2')]);

  it('created adds an open decision, once, in order', () => {
    const u = applyNeedEvent(base, { kind: 'needs.created', data: dec('n3'), seq: 5 });
    expect(ids(u.items)).toEqual(['n3', 'n2', 'n1']);
    expect(applyNeedEvent(u.items, { kind: 'needs.created', data: dec('n3'), seq: 6 }).items).toBe(u.items);
  });

  it('answered elsewhere marks it settled with a note; it no longer counts', () => {
    const d = dec('n1', { status: 'answered', answer: { option: 0, text: 'Allow once' }, answeredBy: 'browser' });
    const u = applyNeedEvent(base, { kind: 'needs.answered', data: d });
    expect(u.settled).toBe('n1');
    expect(u.items.find((x) => x.d.id === 'n1')?.note).toBe('Answered in another window: Allow once');
    expect(openCount(u.items)).toBe(1);
    expect(openCount(dropNeed(u.items, 'n1'))).toBe(1);
    // The same event again changes nothing.
    expect(applyNeedEvent(u.items, { kind: 'needs.answered', data: d }).items).toBe(u.items);
  });

  it('answered here drops it without a note', () => {
    const d = dec('n2', { status: 'answered', answer: { option: 2, text: 'Refuse' } });
    const u = applyNeedEvent(base, { kind: 'needs.answered', data: d }, { mine: new Set(['n2']) });
    expect(ids(u.items)).toEqual(['n1']);
    expect(u.settled).toBeUndefined();
  });

  it.each([
    ['needs.withdrawn', dec('n1', { status: 'withdrawn' }), 'Withdrawn: its run ended.'],
    ['needs.expired', dec('n1', { status: 'expired' }), 'Expired: nobody waits for the answer any more.'],
    [
      'needs.answered',
      dec('n1', { status: 'answered', answer: { option: -1, text: 'use blue' }, answeredBy: 'command line' }),
      'Answered from the command line: use blue',
    ],
    ['needs.answered', dec('n1', { status: 'answered', answeredBy: 'run unattended' }), 'Answered by Run unattended.'],
    ['needs.answered', dec('n1', { status: 'answered', answeredBy: 'phone' }), 'Answered on your phone.'],
  ])('%s → %s', (kind, d, want) => {
    expect(applyNeedEvent(base, { kind, data: d }).items[1].note).toBe(want);
    expect(settledNote(d)).toBe(want);
  });

  it('skips what the loaded list already reflects, unknown decisions, other kinds and bad data', () => {
    expect(applyNeedEvent(base, { kind: 'needs.created', data: dec('n9'), seq: 4 }, { seq: 4 }).items).toBe(base);
    expect(applyNeedEvent(base, { kind: 'needs.answered', data: dec('n9', { status: 'answered' }) }).items).toBe(base);
    expect(applyNeedEvent(base, { kind: 'needs.created', data: dec('n9', { status: 'answered' }) }).items).toBe(base);
    expect(applyNeedEvent(base, { kind: 'task.created', data: dec('n9') }).items).toBe(base);
    expect(applyNeedEvent(base, { kind: 'needs.created', data: 'oops' }).items).toBe(base);
  });
});
