import { isStatus, STATUSES } from './states';
import { TASK_KINDS, TASK_PURGED, TASK_UPDATED } from './events.gen';
import type { LiveEvent, Status, Task, TaskFields } from './types';

/** Order within a column: position ascending, then createdAt, then id (stable). */
export function compareTasks(a: Task, b: Task): number {
  if (a.position !== b.position) return a.position - b.position;
  if (a.createdAt !== b.createdAt) return a.createdAt < b.createdAt ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

export function sortTasks(tasks: readonly Task[]): Task[] {
  return [...tasks].sort(compareTasks);
}

/** Every status gets a (possibly empty) sorted list; tasks with an unknown status are left out. */
export function groupByStatus(tasks: readonly Task[]): Record<Status, Task[]> {
  const groups = Object.fromEntries(STATUSES.map((s) => [s, [] as Task[]])) as Record<Status, Task[]>;
  for (const t of tasks) {
    if (isStatus(t.status)) groups[t.status].push(t);
  }
  for (const s of STATUSES) groups[s].sort(compareTasks);
  return groups;
}

/** The task event kinds the board follows. Every other kind is ignored. */
export const TASK_EVENT_KINDS = TASK_KINDS;

function isTaskLike(v: unknown): v is Task {
  return typeof v === 'object' && v !== null && typeof (v as Task).id === 'string';
}

export interface ApplyOptions {
  /**
   * Ignore an upsert older than the copy already held (by updatedAt). Used for events that
   * arrived while the first list was loading; once live, the stream's order is authoritative.
   */
  onlyNewer?: boolean;
}

/**
 * Applies one live event to the list and returns the new list (the input is not changed).
 * Upserts the task unless it is trashed (deletedAt set) or the kind is task.purged, which remove it.
 * Unknown kinds and malformed data return the same list.
 */
export function applyEvent(tasks: readonly Task[], ev: LiveEvent, opts: ApplyOptions = {}): readonly Task[] {
  if (!(TASK_EVENT_KINDS as readonly string[]).includes(ev.kind)) return tasks;
  if (!isTaskLike(ev.data)) return tasks;
  const incoming = ev.data;
  const i = tasks.findIndex((t) => t.id === incoming.id);
  if (ev.kind === TASK_PURGED || incoming.deletedAt) {
    return i < 0 ? tasks : tasks.filter((t) => t.id !== incoming.id);
  }
  if (i < 0) return [...tasks, incoming];
  if (opts.onlyNewer && incoming.updatedAt < tasks[i].updatedAt) return tasks;
  const next = tasks.slice();
  next[i] = incoming;
  return next;
}

/** Puts a task the API returned into the list (or removes it if it is trashed). */
export function upsertTask(tasks: readonly Task[], task: Task): readonly Task[] {
  return applyEvent(tasks, { kind: TASK_UPDATED, data: task });
}

export function removeTask(tasks: readonly Task[], id: string): readonly Task[] {
  return tasks.filter((t) => t.id !== id);
}

export interface Filter {
  projectId: string; // '' any
  ownerId: string; // '' any
  label: string; // '' any
  text: string; // '' any; matched against the title, case-insensitive
}

export const NO_FILTER: Filter = { projectId: '', ownerId: '', label: '', text: '' };

/** Sentinel for "no project" / "no owner" in a filter. */
export const NONE = '__none__';

function matchId(want: string, have: string | null): boolean {
  if (want === '') return true;
  if (want === NONE) return have === null || have === '';
  return have === want;
}

export function filterTasks(tasks: readonly Task[], f: Filter): Task[] {
  const label = f.label.trim().toLowerCase();
  const text = f.text.trim().toLowerCase();
  return tasks.filter(
    (t) =>
      matchId(f.projectId, t.projectId) &&
      matchId(f.ownerId, t.ownerId) &&
      (label === '' || (t.labels ?? []).some((l) => l.toLowerCase() === label)) &&
      (text === '' || t.title.toLowerCase().includes(text)),
  );
}

export function isFiltered(f: Filter): boolean {
  return f.projectId !== '' || f.ownerId !== '' || f.label !== '' || f.text !== '';
}

/** Every label in use, de-duplicated case-insensitively (first spelling wins), sorted. */
export function labelsIn(tasks: readonly Task[]): string[] {
  const seen = new Map<string, string>();
  for (const t of tasks) {
    for (const l of t.labels ?? []) {
      const k = l.toLowerCase();
      if (!seen.has(k)) seen.set(k, l);
    }
  }
  return [...seen.values()].sort((a, b) => a.localeCompare(b, undefined, { sensitivity: 'base' }));
}

/** "a, b ,, c" → ["a","b","c"]: trimmed, empties dropped, duplicates (case-insensitive) dropped. */
export function parseLabels(input: string): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const raw of input.split(',')) {
    const l = raw.trim();
    if (l === '' || seen.has(l.toLowerCase())) continue;
    seen.add(l.toLowerCase());
    out.push(l);
  }
  return out;
}

export function formatLabels(labels: readonly string[]): string {
  return labels.join(', ');
}

function sameValue(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => x === b[i]);
  return a === b;
}

/** Only the fields of `edited` that differ from `task`: the body of a PATCH. */
export function changedFields(task: Task, edited: TaskFields): TaskFields {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(edited)) {
    if (v === undefined) continue;
    if (!sameValue((task as unknown as Record<string, unknown>)[k], v)) out[k] = v;
  }
  return out as TaskFields;
}

export type DueState = 'overdue' | 'today' | 'soon' | 'later' | null;

/** How a due date (YYYY-MM-DD) stands against today (YYYY-MM-DD, the person's local day). */
export function dueState(due: string | null, today: string): DueState {
  if (!due) return null;
  if (due < today) return 'overdue';
  if (due === today) return 'today';
  const d = Date.parse(due + 'T00:00:00Z') - Date.parse(today + 'T00:00:00Z');
  return d <= 3 * 86_400_000 ? 'soon' : 'later';
}

/** Today's local date as YYYY-MM-DD. */
export function localDay(d: Date = new Date()): string {
  const m = String(d.getMonth() + 1).padStart(2, '0');
  const day = String(d.getDate()).padStart(2, '0');
  return `${d.getFullYear()}-${m}-${day}`;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** "2025-03-07" → "7 Mar" (same year as today) or "7 Mar 2026". Unparseable input comes back as is. */
export function formatDue(due: string, today: string): string {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(due);
  if (!m) return due;
  const month = MONTHS[Number(m[2]) - 1];
  if (!month) return due;
  const base = `${Number(m[3])} ${month}`;
  return m[1] === today.slice(0, 4) ? base : `${base} ${m[1]}`;
}
