// A node's routines (spec 002 §6.5), as /api/node/routines serves them (runtime/api/routines.go),
// and the pure steps the settings page needs: a trigger in plain words, a run's status in words,
// and the form's fields made into a routine the runtime takes.

import { request } from './api';

export type TriggerKind = 'schedule' | 'event' | 'webhook';

/** What starts a routine (runtime/node/routines.go Trigger). */
export interface Trigger {
  kind: TriggerKind | string;
  /** A schedule's five-field rule, in timezone (an IANA name; "Local" is the runtime computer's). */
  cron?: string;
  timezone?: string;
  /** An event's kind of record, task or page; space limits it to one space. */
  on?: string;
  space?: string;
  windowSeconds?: number;
}

export type RunStatus = 'gathering' | 'waiting' | 'started' | 'done' | 'failed' | 'missed' | 'skipped';

/** One occurrence of a routine. */
export interface RoutineRun {
  id: string;
  routineId: string;
  key: string;
  status: RunStatus | string;
  dueAt: string;
  changes: string[] | null;
  turnId?: string;
  result?: string;
  error?: string;
  createdAt: string;
  startedAt?: string;
  endedAt?: string;
}

export type Notify = 'always' | 'needed' | 'never';

export interface Routine {
  id: string;
  nodeId: string;
  title: string;
  instruction: string;
  trigger: Trigger;
  notify: Notify | string;
  roomId: string;
  status: 'active' | 'paused' | string;
  nextAt?: string;
  /** A webhook's token: only in the answer that made or renewed it. */
  token?: string;
  lastRuns: RoutineRun[] | null;
  createdAt: string;
  updatedAt: string;
}

export interface NewRoutine {
  nodeId: string;
  title?: string;
  instruction: string;
  trigger: Trigger;
  notify?: Notify;
  roomId?: string;
}

export interface RoutineChange {
  title?: string;
  instruction?: string;
  trigger?: Trigger;
  notify?: Notify;
  roomId?: string;
  status?: 'active' | 'paused';
}

const enc = encodeURIComponent;

export const routinesApi = {
  list: (nodeId: string) =>
    request<{ routines: Routine[] | null }>('GET', `/api/node/routines?nodeId=${enc(nodeId)}`).then((r) => r.routines ?? []),
  create: (r: NewRoutine) => request<Routine>('POST', '/api/node/routines', r),
  get: (id: string) => request<Routine>('GET', `/api/node/routines/${enc(id)}`),
  update: (id: string, c: RoutineChange) => request<Routine>('PATCH', `/api/node/routines/${enc(id)}`, c),
  remove: (id: string) => request<unknown>('DELETE', `/api/node/routines/${enc(id)}`),
  run: (id: string) => request<RoutineRun>('POST', `/api/node/routines/${enc(id)}/run`),
  renewToken: (id: string) => request<Routine>('POST', `/api/node/routines/${enc(id)}/token`),
  runs: (id: string, limit = 50) =>
    request<{ runs: RoutineRun[] | null }>('GET', `/api/node/routines/${enc(id)}/runs?limit=${limit}`).then((r) => r.runs ?? []),
};

/** Where a webhook routine is called: outside the browser's session path, with its own token. */
export function hookURL(origin: string, id: string): string {
  return `${origin.replace(/\/+$/, '')}/api/node/hooks/routines/${enc(id)}`;
}

const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const DAY_NAMES: Record<string, number> = { sun: 0, mon: 1, tue: 2, wed: 3, thu: 4, fri: 5, sat: 6 };

/** A weekday field's days (0 is Sunday), or null for a shape not worth putting in words. */
function weekdays(field: string): number[] | null {
  const day = (s: string): number | null => {
    const k = s.toLowerCase();
    if (k in DAY_NAMES) return DAY_NAMES[k];
    if (!/^[0-7]$/.test(k)) return null;
    return Number(k) % 7;
  };
  const out = new Set<number>();
  for (const part of field.split(',')) {
    const [a, b, ...rest] = part.split('-');
    const from = day(a);
    if (from === null || rest.length) return null;
    if (b === undefined) {
      out.add(from);
      continue;
    }
    const to = day(b);
    if (to === null) return null;
    // 1-7 and 5-0 reach Sunday; a range never runs backwards otherwise.
    const end = to === 0 && from > 0 ? 7 : to;
    if (end < from) return null;
    for (let d = from; d <= end; d++) out.add(d % 7);
  }
  return [...out].sort((x, y) => x - y);
}

function daysWords(days: number[]): string {
  const key = days.join(',');
  if (key === '1,2,3,4,5') return 'Every weekday';
  if (key === '0,6') return 'Every Saturday and Sunday';
  if (days.length === 7) return 'Every day';
  // Monday first, as a week reads.
  const names = [...days].sort((x, y) => ((x + 6) % 7) - ((y + 6) % 7)).map((d) => DAYS[d]);
  const list = names.length === 1 ? names[0] : `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]}`;
  return `Every ${list}`;
}

function ordinal(n: number): string {
  const tens = n % 100;
  if (tens >= 11 && tens <= 13) return `${n}th`;
  return `${n}${['th', 'st', 'nd', 'rd'][n % 10] ?? 'th'}`;
}

const num = (s: string, max: number): number | null => (/^\d{1,2}$/.test(s) && Number(s) <= max ? Number(s) : null);
const pad = (n: number) => String(n).padStart(2, '0');

/** A five-field rule in words for its common shapes, or null. */
export function cronWords(cron: string): string | null {
  const f = cron.trim().split(/\s+/);
  if (f.length !== 5) return null;
  const [min, hour, dom, mon, dow] = f;
  if (mon !== '*') return null;
  const step = (s: string) => /^\*\/(\d{1,2})$/.exec(s)?.[1];
  if (hour === '*' && dom === '*' && dow === '*') {
    if (min === '*') return 'Every minute';
    const n = step(min);
    if (n) return Number(n) === 1 ? 'Every minute' : `Every ${Number(n)} minutes`;
    const m = num(min, 59);
    if (m !== null) return m === 0 ? 'Every hour, on the hour' : `Every hour at ${m} past`;
    return null;
  }
  const m = num(min, 59);
  if (m === null) return null;
  const hs = step(hour);
  if (hs && dom === '*' && dow === '*') {
    const every = Number(hs) === 1 ? 'Every hour' : `Every ${Number(hs)} hours`;
    return m === 0 ? every : `${every} at ${m} past`;
  }
  const h = num(hour, 23);
  if (h === null) return null;
  const at = `at ${pad(h)}:${pad(m)}`;
  if (dom === '*' && dow === '*') return `Every day ${at}`;
  if (dom === '*') {
    const days = weekdays(dow);
    return days && days.length ? `${daysWords(days)} ${at}` : null;
  }
  const d = num(dom, 31);
  if (d !== null && d > 0 && dow === '*') return `On the ${ordinal(d)} of every month ${at}`;
  return null;
}

/** A trigger in plain words: "Every weekday at 09:00 (Europe/Paris)", "When a task changes in …". */
export function triggerWords(t: Trigger): string {
  switch (t.kind) {
    case 'schedule': {
      const cron = (t.cron ?? '').trim();
      const words = cronWords(cron) ?? cron;
      const tz = t.timezone && t.timezone !== 'Local' ? ` (${t.timezone})` : '';
      return words + tz;
    }
    case 'event': {
      const what = t.on === 'page' ? 'a page' : 'a task';
      return t.space ? `When ${what} changes in ${t.space}` : `When ${what} changes in any space`;
    }
    case 'webhook':
      return 'When called by a webhook';
  }
  return String(t.kind);
}

const RUN_WORDS: Record<string, string> = {
  gathering: 'Gathering changes',
  waiting: 'Waiting to run',
  started: 'Running',
  done: 'Done',
  failed: 'Failed',
  missed: 'Missed',
  skipped: 'Skipped',
};

/** A run's status in words; an unknown one as it came. */
export function runStatusWords(status: string): string {
  return RUN_WORDS[status] ?? status;
}

/** Whether a run may still change: the list is read again while one is. */
export function runGoing(status: string): boolean {
  return status === 'gathering' || status === 'waiting' || status === 'started';
}

/** What started a run, from its key (at:, event:, hook:, manual:). */
export function runCause(key: string): string {
  if (key.startsWith('at:')) return 'Scheduled';
  if (key.startsWith('event:')) return 'Changes';
  if (key.startsWith('hook:')) return 'Webhook call';
  if (key.startsWith('manual:')) return 'Run by you';
  return '';
}

/** A time in words for a list: "today at 09:00", "tomorrow at 09:00", else "Mon 7 Dec at 09:00". */
export function whenWords(iso: string, now: Date, timeZone?: string): string {
  const t = new Date(iso);
  if (Number.isNaN(t.getTime())) return '';
  const day = (d: Date) => new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(d);
  const time = new Intl.DateTimeFormat('en-GB', { timeZone, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(t);
  const tomorrow = new Date(now.getTime() + 24 * 3600 * 1000);
  const yesterday = new Date(now.getTime() - 24 * 3600 * 1000);
  if (day(t) === day(now)) return `today at ${time}`;
  if (day(t) === day(tomorrow)) return `tomorrow at ${time}`;
  if (day(t) === day(yesterday)) return `yesterday at ${time}`;
  const date = new Intl.DateTimeFormat('en-GB', { timeZone, weekday: 'short', day: 'numeric', month: 'short' }).format(t);
  return `${date.replace(',', '')} at ${time}`;
}

/** The new-routine form's fields, as typed. */
export interface RoutineForm {
  title: string;
  instruction: string;
  kind: TriggerKind;
  cron: string;
  timezone: string;
  on: 'task' | 'page';
  space: string;
  /** Seconds of changes or calls gathered into one run, as typed; empty is the runtime's default. */
  window: string;
  notify: Notify;
}

export type Built = { ok: true; routine: NewRoutine } | { ok: false; field: keyof RoutineForm; error: string };

/** Same limits as runtime/node/routines.go. */
export const MAX_INSTRUCTION = 6000;
const MAX_WINDOW = 3600;

/** The browser's time zone, the form's default for a schedule. */
export function browserZone(): string {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || '';
  } catch {
    return '';
  }
}

export function emptyForm(timezone = browserZone()): RoutineForm {
  return { title: '', instruction: '', kind: 'schedule', cron: '0 9 * * 1-5', timezone, on: 'task', space: '', window: '', notify: 'always' };
}

/** The form made into a routine for node, or the first thing wrong with it in one sentence. The
 * runtime checks everything again (a time zone's name, the cron's values); this catches what a
 * person can see at once. */
export function buildRoutine(nodeId: string, f: RoutineForm): Built {
  const instruction = f.instruction.trim();
  if (!instruction) return { ok: false, field: 'instruction', error: 'Say what the routine does each time.' };
  if ([...instruction].length > MAX_INSTRUCTION) {
    return { ok: false, field: 'instruction', error: `An instruction is at most ${MAX_INSTRUCTION} characters.` };
  }
  const trigger: Trigger = { kind: f.kind };
  if (f.kind === 'schedule') {
    const cron = f.cron.trim().split(/\s+/).filter(Boolean);
    if (cron.length !== 5) {
      return {
        ok: false,
        field: 'cron',
        error: `A schedule has five fields (minute hour day month weekday, such as 0 9 * * 1-5); this has ${cron.length}.`,
      };
    }
    trigger.cron = cron.join(' ');
    if (f.timezone.trim()) trigger.timezone = f.timezone.trim();
  } else {
    const w = f.window.trim();
    if (w) {
      const n = Number(w);
      if (!Number.isInteger(n) || n < 1 || n > MAX_WINDOW) {
        return { ok: false, field: 'window', error: `Gather changes for 1 to ${MAX_WINDOW} seconds, or leave it empty.` };
      }
      trigger.windowSeconds = n;
    }
    if (f.kind === 'event') {
      trigger.on = f.on;
      if (f.space.trim()) trigger.space = f.space.trim();
    }
  }
  const routine: NewRoutine = { nodeId, instruction, trigger, notify: f.notify };
  if (f.title.trim()) routine.title = f.title.trim();
  return { ok: true, routine };
}
