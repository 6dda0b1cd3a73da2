import { TASK_PRIORITIES, TASK_STATUSES } from './catalog.gen';
import type { Moves, Priority, Status } from './types';

/** Columns in board order; `dropped` last, hidden unless asked for. */
export const STATUSES: readonly Status[] = TASK_STATUSES;

export const STATUS_LABEL: Record<Status, string> = {
  proposed: 'Proposed',
  todo: 'To do',
  in_progress: 'In progress',
  waiting_approval: 'Waiting approval',
  blocked: 'Blocked',
  done: 'Done',
  dropped: 'Dropped',
};

export const PRIORITIES: readonly Priority[] = TASK_PRIORITIES;

export const PRIORITY_LABEL: Record<Priority, string> = {
  none: 'None',
  low: 'Low',
  medium: 'Medium',
  high: 'High',
  urgent: 'Urgent',
};

export function isStatus(s: unknown): s is Status {
  return typeof s === 'string' && (STATUSES as readonly string[]).includes(s);
}

/** The columns shown, in order. */
export function visibleStatuses(showDropped: boolean): Status[] {
  return STATUSES.filter((s) => showDropped || s !== 'dropped');
}

/**
 * Whether a task may move from `from` to `to`, by the server's moves table.
 * Staying put is always allowed. Without a table (not loaded yet) every move is
 * offered and the server decides.
 */
export function canMove(moves: Moves | null, from: Status, to: Status): boolean {
  if (from === to) return true;
  if (!moves) return true;
  return (moves[from] ?? []).includes(to);
}

/** The statuses a task in `from` may move to, in board order, excluding `from`. */
export function allowedTargets(moves: Moves | null, from: Status): Status[] {
  return STATUSES.filter((s) => s !== from && canMove(moves, from, s));
}
