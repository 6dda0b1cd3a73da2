import { describe, expect, it } from 'vitest';
import { allowedTargets, canMove, isStatus, visibleStatuses } from './states';
import type { Moves, Status } from './types';

const moves: Moves = {
  proposed: ['todo', 'in_progress', 'dropped'],
  todo: ['in_progress', 'blocked', 'done', 'dropped'],
  done: ['todo', 'in_progress'],
};

describe('canMove', () => {
  const cases: [Moves | null, Status, Status, boolean][] = [
    [moves, 'proposed', 'todo', true],
    [moves, 'proposed', 'done', false],
    [moves, 'done', 'todo', true],
    [moves, 'done', 'blocked', false],
    [moves, 'done', 'done', true], // staying put
    [moves, 'blocked', 'todo', false], // no entry in the table
    [null, 'done', 'blocked', true], // table not loaded: the server decides
  ];
  it.each(cases)('%#: %s → %s is %s', (m, from, to, want) => {
    expect(canMove(m, from, to)).toBe(want);
  });
});

describe('allowedTargets', () => {
  it.each([
    ['proposed', ['todo', 'in_progress', 'dropped']],
    ['done', ['todo', 'in_progress']],
    ['blocked', []],
  ] as [Status, Status[]][])('%s → %j', (from, want) => {
    expect(allowedTargets(moves, from)).toEqual(want);
  });

  it('keeps board order whatever order the server sent', () => {
    expect(allowedTargets({ todo: ['done', 'proposed', 'blocked'] }, 'todo')).toEqual([
      'proposed',
      'blocked',
      'done',
    ]);
  });

  it('offers every other status when the table is unknown', () => {
    expect(allowedTargets(null, 'todo')).toHaveLength(6);
  });
});

describe('visibleStatuses', () => {
  it('hides dropped by default and shows it on request', () => {
    expect(visibleStatuses(false)).not.toContain('dropped');
    expect(visibleStatuses(false)).toHaveLength(6);
    expect(visibleStatuses(true).at(-1)).toBe('dropped');
  });
});

describe('isStatus', () => {
  it.each([
    ['todo', true],
    ['waiting_approval', true],
    ['Todo', false],
    ['', false],
    [3, false],
    [null, false],
  ])('%j → %s', (v, want) => expect(isStatus(v)).toBe(want));
});
