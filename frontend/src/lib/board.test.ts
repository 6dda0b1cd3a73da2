import { describe, expect, it } from 'vitest';
import {
  applyEvent,
  changedFields,
  dueState,
  filterTasks,
  formatDue,
  groupByStatus,
  labelsIn,
  NO_FILTER,
  NONE,
  parseLabels,
  sortTasks,
  upsertTask,
} from './board';
import type { Task } from './types';

function task(id: string, over: Partial<Task> = {}): Task {
  return {
    id,
    spaceId: 'spc_1',
    projectId: null,
    title: `Task ${id}`,
    status: 'todo',
    priority: 'none',
    due: null,
    labels: [],
    ownerId: null,
    people: [],
    repoId: null,
    page: '',
    position: 1,
    createdAt: '2025-01-01T00:00:00Z',
    updatedAt: '2025-01-01T00:00:00Z',
    deletedAt: null,
    ...over,
  };
}

const ids = (ts: readonly Task[]) => ts.map((t) => t.id);

describe('sortTasks', () => {
  it('orders by position, then createdAt, then id', () => {
    const ts = [
      task('c', { position: 2 }),
      task('b', { position: 1, createdAt: '2025-01-02T00:00:00Z' }),
      task('a2', { position: 1 }),
      task('a1', { position: 1 }),
      task('z', { position: 0.5 }),
    ];
    expect(ids(sortTasks(ts))).toEqual(['z', 'a1', 'a2', 'b', 'c']);
  });

  it('does not change its input', () => {
    const ts = [task('b', { position: 2 }), task('a', { position: 1 })];
    sortTasks(ts);
    expect(ids(ts)).toEqual(['b', 'a']);
  });
});

describe('groupByStatus', () => {
  const ts = [
    task('1', { status: 'done', position: 2 }),
    task('2', { status: 'todo' }),
    task('3', { status: 'done', position: 1 }),
    task('4', { status: 'nonsense' as Task['status'] }),
  ];
  const g = groupByStatus(ts);

  it('has a list for every status, empty ones included', () => {
    expect(Object.keys(g)).toEqual(['proposed', 'todo', 'in_progress', 'waiting_approval', 'blocked', 'done', 'dropped']);
    expect(g.blocked).toEqual([]);
  });

  it.each([
    ['todo', ['2']],
    ['done', ['3', '1']],
    ['proposed', []],
  ] as const)('%s holds %j sorted', (status, want) => {
    expect(ids(g[status])).toEqual(want);
  });

  it('leaves out tasks with an unknown status', () => {
    expect(Object.values(g).flat()).toHaveLength(3);
  });
});

describe('applyEvent', () => {
  const base = [task('a', { title: 'A' }), task('b', { title: 'B' })];

  const cases: { name: string; kind: string; data: unknown; want: string[]; title?: [string, string] }[] = [
    { name: 'created adds', kind: 'task.created', data: task('c'), want: ['a', 'b', 'c'] },
    { name: 'created twice does not duplicate', kind: 'task.created', data: task('a', { title: 'A2' }), want: ['a', 'b'], title: ['a', 'A2'] },
    { name: 'updated replaces in place', kind: 'task.updated', data: task('b', { title: 'B2' }), want: ['a', 'b'], title: ['b', 'B2'] },
    { name: 'updated unknown task adds it', kind: 'task.updated', data: task('x'), want: ['a', 'b', 'x'] },
    { name: 'trashed removes', kind: 'task.trashed', data: task('a', { deletedAt: '2025-01-02T00:00:00Z' }), want: ['b'] },
    { name: 'updated with deletedAt removes', kind: 'task.updated', data: task('b', { deletedAt: '2025-01-02T00:00:00Z' }), want: ['a'] },
    { name: 'restored adds back', kind: 'task.restored', data: task('r'), want: ['a', 'b', 'r'] },
    { name: 'purged removes by id', kind: 'task.purged', data: { id: 'a' }, want: ['b'] },
    { name: 'purged unknown id is a no-op', kind: 'task.purged', data: { id: 'zz' }, want: ['a', 'b'] },
    { name: 'unknown kind ignored', kind: 'project.updated', data: task('p'), want: ['a', 'b'] },
    { name: 'run events ignored', kind: 'run.output', data: { id: 'run_1' }, want: ['a', 'b'] },
    { name: 'malformed data ignored', kind: 'task.created', data: 'oops', want: ['a', 'b'] },
    { name: 'null data ignored', kind: 'task.updated', data: null, want: ['a', 'b'] },
  ];

  it.each(cases)('$name', ({ kind, data, want, title }) => {
    const next = applyEvent(base, { kind, data });
    expect(ids(next)).toEqual(want);
    if (title) expect(next.find((t) => t.id === title[0])?.title).toBe(title[1]);
  });

  it('never changes its input', () => {
    const copy = structuredClone(base);
    applyEvent(base, { kind: 'task.updated', data: task('a', { title: 'changed' }) });
    applyEvent(base, { kind: 'task.purged', data: { id: 'a' } });
    expect(base).toEqual(copy);
  });

  it('returns the same list for ignored events (no needless re-render)', () => {
    expect(applyEvent(base, { kind: 'ledger.appended', data: {} })).toBe(base);
  });

  it('onlyNewer keeps a fresher copy over an older event', () => {
    const held = [task('a', { title: 'new', updatedAt: '2025-01-03T00:00:00Z' })];
    const older = task('a', { title: 'old', updatedAt: '2025-01-02T00:00:00Z' });
    expect(applyEvent(held, { kind: 'task.updated', data: older }, { onlyNewer: true })[0].title).toBe('new');
    expect(applyEvent(held, { kind: 'task.updated', data: older })[0].title).toBe('old');
  });

  it('upsertTask removes a task the API returned as trashed', () => {
    expect(ids(upsertTask(base, task('a', { deletedAt: '2025-01-05T00:00:00Z' })))).toEqual(['b']);
  });
});

describe('filterTasks', () => {
  const ts = [
    task('1', { projectId: 'prj_a', ownerId: 'per_x', labels: ['Bug', 'ui'], title: 'Fix login' }),
    task('2', { projectId: 'prj_b', labels: ['bug'], title: 'Crash on start' }),
    task('3', { ownerId: 'per_x', labels: [], title: 'Write docs' }),
  ];
  it.each([
    ['no filter', {}, ['1', '2', '3']],
    ['project', { projectId: 'prj_a' }, ['1']],
    ['no project', { projectId: NONE }, ['3']],
    ['owner', { ownerId: 'per_x' }, ['1', '3']],
    ['no owner', { ownerId: NONE }, ['2']],
    ['label, case-insensitive', { label: 'BUG' }, ['1', '2']],
    ['label with spaces', { label: ' ui ' }, ['1']],
    ['label not partial', { label: 'bu' }, []],
    ['text in title', { text: 'crash' }, ['2']],
    ['combined', { label: 'bug', ownerId: 'per_x' }, ['1']],
  ] as const)('%s', (_name, f, want) => {
    expect(ids(filterTasks(ts, { ...NO_FILTER, ...f }))).toEqual(want);
  });
});

describe('labels', () => {
  it.each([
    ['a, b ,c', ['a', 'b', 'c']],
    [' , ,', []],
    ['', []],
    ['Bug, bug, BUG, ui', ['Bug', 'ui']],
    ['two words, x', ['two words', 'x']],
  ])('parseLabels(%j) → %j', (input, want) => expect(parseLabels(input)).toEqual(want));

  it('labelsIn de-duplicates case-insensitively and sorts', () => {
    const ts = [task('1', { labels: ['ui', 'Bug'] }), task('2', { labels: ['bug', 'api'] })];
    expect(labelsIn(ts)).toEqual(['api', 'Bug', 'ui']);
  });
});

describe('changedFields', () => {
  const t = task('a', { title: 'T', labels: ['x'], due: null, priority: 'low' });
  it.each([
    ['nothing changed', { title: 'T', labels: ['x'], due: null, priority: 'low' }, {}],
    ['title', { title: 'T2', labels: ['x'] }, { title: 'T2' }],
    ['labels by value', { labels: ['x', 'y'] }, { labels: ['x', 'y'] }],
    ['due set', { due: '2025-02-01' }, { due: '2025-02-01' }],
    ['due cleared stays null', { due: null }, {}],
    ['priority', { priority: 'urgent' }, { priority: 'urgent' }],
    ['undefined fields skipped', { title: undefined }, {}],
  ] as const)('%s', (_n, edited, want) => {
    expect(changedFields(t, edited as never)).toEqual(want);
  });
});

describe('due dates', () => {
  it.each([
    [null, null],
    ['2025-03-09', 'overdue'],
    ['2025-03-10', 'today'],
    ['2025-03-13', 'soon'],
    ['2025-03-14', 'later'],
  ] as const)('dueState(%s) on 2025-03-10 → %s', (due, want) => {
    expect(dueState(due, '2025-03-10')).toBe(want);
  });

  it.each([
    ['2025-03-07', '7 Mar'],
    ['2026-12-31', '31 Dec 2026'],
    ['not a date', 'not a date'],
    ['2025-13-01', '2025-13-01'],
  ])('formatDue(%s) → %s', (due, want) => expect(formatDue(due, '2025-03-10')).toBe(want));
});
