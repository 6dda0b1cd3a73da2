// Same-origin JSON client for the runtime's API. Requests go under this browser's session path
// (session.ts), where its cookie goes along by itself; the UI never adds an Authorization header.

import type { Decision } from './needs';
import type { AnyRecord } from './records';
import type { Session, SessionDetail } from './sessions';
import type { AssignBody, Job } from './runs';
import type { LiveEvent, Moves, Person, Project, Status, Task, TaskFields } from './types';
import { apiURL, forgetSession } from './session';

export class ApiError extends Error {
  readonly status: number;
  /** On a refused move (409), the statuses the task may move to. */
  readonly allowed?: Status[];

  constructor(status: number, message: string, allowed?: Status[]) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.allowed = allowed;
  }
}

export const UNREACHABLE = 'Ensemble is not answering; check that `ensemble serve` is still running.';

/** The one sentence to show for an error answer: the body's `error`, or a fallback naming the status. */
export function errorSentence(status: number, body: unknown): string {
  if (body && typeof body === 'object' && typeof (body as { error?: unknown }).error === 'string') {
    const s = (body as { error: string }).error.trim();
    if (s) return s;
  }
  if (status === 401) return 'You are not signed in.';
  if (status === 413) return 'That is too large to save.';
  if (status >= 500) return `Ensemble had a problem answering (HTTP ${status}); try again.`;
  return `The request was refused (HTTP ${status}).`;
}

let unauthorized: (sentence: string) => void = () => {};

/** Called when a request answers 401, with the runtime's sentence: what to do to sign in (run a
 * command on the computer; on a phone, scan a pairing code). */
export function onUnauthorized(fn: (sentence: string) => void): void {
  unauthorized = fn;
}

/** For requests made outside request() (a streamed answer) that were answered 401. */
export function notifyUnauthorized(sentence = ''): void {
  unauthorized(sentence || errorSentence(401, null));
}

/** The tasks' answer public/preload-tasks.js asked for while the scripts loaded, taken once. */
function takePreloaded(): Promise<Response> | undefined {
  const w = globalThis as { __ensembleTasks?: Promise<Response> };
  const p = w.__ensembleTasks;
  delete w.__ensembleTasks;
  return p;
}

export async function request<T>(method: string, path: string, body?: unknown, opts: { preloaded?: boolean } = {}): Promise<T> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  const init: RequestInit = { method, headers, credentials: 'same-origin', cache: 'no-store' };
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let res: Response;
  try {
    res = await ((opts.preloaded && takePreloaded()) || fetch(apiURL(path), init));
  } catch {
    throw new ApiError(0, UNREACHABLE);
  }
  let data: unknown = null;
  const text = await res.text().catch(() => '');
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = null;
    }
  }
  if (!res.ok) {
    if (res.status === 401) {
      forgetSession(); // a session that ended (signed out elsewhere, or not kept over a restart)
      unauthorized(errorSentence(401, data));
    }
    const allowed = (data as { allowed?: Status[] } | null)?.allowed;
    throw new ApiError(res.status, errorSentence(res.status, data), Array.isArray(allowed) ? allowed : undefined);
  }
  return data as T;
}

const enc = encodeURIComponent;

/** A run's live picture of the tab its agent uses (GET /api/agent/jobs/{id}/live). */
export interface RunLive {
  /** The picture as an object URL the caller revokes; empty when there is none or it is paused. */
  picture: string;
  /** Why there is no picture now: sensitive, controlled, secret_on_screen; empty when none. */
  paused: string;
  tab: string;
  url: string;
  title: string;
  at: string;
}

async function fetchLive(id: string): Promise<RunLive> {
  let res: Response;
  try {
    res = await fetch(apiURL(`/api/agent/jobs/${enc(id)}/live`), { credentials: 'same-origin', cache: 'no-store' });
  } catch {
    throw new ApiError(0, UNREACHABLE);
  }
  const h = (name: string) => {
    try {
      return decodeURIComponent(res.headers.get(`X-Ensemble-Live-${name}`) ?? '');
    } catch {
      return '';
    }
  };
  if (!res.ok) throw new ApiError(res.status, errorSentence(res.status, await res.json().catch(() => null)));
  const picture = res.status === 200 ? URL.createObjectURL(await res.blob()) : '';
  return { picture, paused: h('Paused'), tab: h('Tab'), url: h('Url'), title: h('Title'), at: h('At') };
}

/** A file a run's browser tools held for the person's preview. */
export interface HeldFile {
  id: string;
  name: string;
  size: number;
}

export const api = {
  /** The tasks, and seq: the newest event the list reflects. */
  tasks: (first = false) =>
    request<{ tasks: Task[]; seq?: number }>('GET', '/api/tasks', undefined, { preloaded: first }).then((r) => ({
      tasks: r.tasks ?? [],
      seq: r.seq ?? 0,
    })),
  states: () => request<{ states: Status[]; moves: Moves }>('GET', '/api/tasks/states'),
  createTask: (fields: TaskFields & { title: string }) => request<Task>('POST', '/api/tasks', fields),
  updateTask: (id: string, fields: TaskFields) => request<Task>('PATCH', `/api/tasks/${enc(id)}`, fields),
  deleteTask: (id: string) => request<Task>('DELETE', `/api/tasks/${enc(id)}`),
  projects: () => request<{ projects: Project[] }>('GET', '/api/projects').then((r) => r.projects ?? []),
  people: () => request<{ people: Person[] }>('GET', '/api/people').then((r) => r.people ?? []),
  undo: () => request<{ group?: { summary?: string } }>('POST', '/api/undo'),
  redo: () => request<{ group?: { summary?: string } }>('POST', '/api/redo'),
  task: (id: string) => request<Task>('GET', `/api/tasks/${enc(id)}`),
  jobs: (taskId: string) =>
    request<{ jobs: Job[] }>('GET', `/api/agent/jobs?taskId=${enc(taskId)}`).then((r) => r.jobs ?? []),
  job: (id: string) => request<Job>('GET', `/api/agent/jobs/${enc(id)}`),
  /** A page of a run's trace from the event log: the task page follows the rest on the one stream. */
  runLog: (id: string, after: number) =>
    request<{ events: LiveEvent[] | null; more: boolean }>('GET', `/api/events/log?kinds=run.&subject=${enc(id)}&after=${after}`).then((r) => ({
      events: r.events ?? [],
      more: r.more,
    })),
  assign: (body: AssignBody) => request<Job>('POST', '/api/agent/assign', body),
  jobAction: (id: string, action: 'stop' | 'pause' | 'resume') => request<Job>('POST', `/api/agent/jobs/${enc(id)}/${action}`),
  /** What a run's browser tools held for the person's preview (a saved secret or a key on it). */
  runLive: (id: string) => fetchLive(id),
  heldFiles: (id: string) => request<{ held: HeldFile[] }>('GET', `/api/agent/jobs/${enc(id)}/held`).then((r) => r.held ?? []),
  heldAction: (id: string, file: string, action: 'release' | 'discard') =>
    request<unknown>('POST', `/api/agent/jobs/${enc(id)}/held/${enc(file)}/${action}`),
  needs: () =>
    request<{ needs: Decision[]; seq?: number }>('GET', '/api/needs').then((r) => ({ needs: r.needs ?? [], seq: r.seq ?? 0 })),
  answer: (id: string, a: { option: number } | { text: string }) => request<Decision>('POST', `/api/needs/${enc(id)}/answer`, a),
  /** The newest 200 runs of every task: what the board's cards say of their tasks' runs. */
  recentJobs: () => request<{ jobs: Job[] }>('GET', '/api/agent/jobs').then((r) => r.jobs ?? []),
  /** A kind's records, and seq: the newest event the list reflects. */
  records: <T extends AnyRecord>(path: string) =>
    request<Record<string, unknown>>('GET', `/api/${path}`).then((r) => ({
      list: ((r[path] as T[] | undefined) ?? []).filter((x) => !x.deletedAt),
      seq: typeof r.seq === 'number' ? r.seq : 0,
    })),
  createRecord: <T extends AnyRecord>(path: string, fields: Record<string, unknown>) => request<T>('POST', `/api/${path}`, fields),
  updateRecord: <T extends AnyRecord>(path: string, id: string, fields: Record<string, unknown>) =>
    request<T>('PATCH', `/api/${path}/${enc(id)}`, fields),
  deleteRecord: <T extends AnyRecord>(path: string, id: string) => request<T>('DELETE', `/api/${path}/${enc(id)}`),
  sessions: () => request<{ sessions: Session[] | null }>('GET', '/api/agent/sessions?limit=200').then((r) => r.sessions ?? []),
  session: (id: string) => request<SessionDetail>('GET', `/api/agent/sessions/${enc(id)}`),
  deleteSession: (id: string) => request<Session>('DELETE', `/api/agent/sessions/${enc(id)}`),
};
