// The work a node drives, as its cards in the chat show it: the session card of a run it started
// (spec 002 §8.8, runtime/node sessions) and the plan card of a mission (§6.2). The runtime
// rebuilds a card's data on every change; these read it defensively, as an older card may lack a
// field.
import { request } from './api';
import type { Message } from './node';

export interface RunSettings {
  agent?: string;
  model?: string;
  effort?: string;
  context?: string;
  fast?: boolean | string;
}

export interface SessionItem {
  /** A queued message has no job yet: id names it in the queue routes. */
  id?: string;
  jobId?: string;
  title?: string;
  prompt?: string;
  status?: string;
  position?: number;
}

export interface SessionState {
  id: string;
  nodeId?: string;
  status?: string;
  agent?: string;
  agentId?: string;
  model?: string;
  folder?: string;
  running?: SessionItem | null;
  queue?: SessionItem[] | null;
  updatedAt?: string;
}

/** A run message's data. */
export interface RunCard {
  jobId: string;
  taskId?: string;
  title?: string;
  status?: string;
  summary?: string;
  settings?: { requested?: RunSettings; resolved?: RunSettings; observed?: RunSettings };
  session?: SessionState;
}

export function runCardOf(m: Message): RunCard | null {
  if (m.kind !== 'run' || !m.data || typeof m.data !== 'object') return null;
  const d = m.data as RunCard;
  return d.jobId ? d : null;
}

export interface PlanCheck {
  name: string;
  verdict: string;
  note?: string;
}

export interface PlanAttempt {
  n?: number;
  reason?: string;
  outcome?: string;
  jobId?: string;
  candidate?: string;
  checks?: PlanCheck[];
}

export interface PlanStep {
  id: string;
  nodeId?: string;
  node?: string;
  handle?: string;
  kind?: string;
  brief?: string;
  status?: string;
  outcome?: string;
  heldBy?: string | string[];
  progress?: string;
  attempts?: PlanAttempt[];
}

export interface PlanRequirement {
  id: string;
  text?: string;
  status?: string;
}

/** A plan message's data. */
export interface PlanCard {
  missionId: string;
  goal?: string;
  status?: string;
  outcome?: string;
  steps?: PlanStep[];
  requirements?: PlanRequirement[];
}

/** A plan message's card. The runtime writes the mission's state as state and its requirement
 * ledger as {id: status}; both spellings are read. */
export function planCardOf(m: Message): PlanCard | null {
  if (m.kind !== 'plan' || !m.data || typeof m.data !== 'object') return null;
  const d = m.data as Omit<PlanCard, 'requirements'> & {
    id?: string;
    state?: string;
    requirements?: PlanRequirement[] | Record<string, string> | null;
  };
  const id = d.missionId || d.id;
  if (!id) return null;
  const reqs = d.requirements;
  const requirements = Array.isArray(reqs) ? reqs : Object.entries(reqs ?? {}).map(([rid, status]) => ({ id: rid, status }));
  return { ...d, missionId: id, status: d.status || d.state, requirements };
}

/** One line for a run's settings: what was asked, and what the agent said it runs with. */
export function settingsLine(s: RunCard['settings']): string {
  if (!s) return '';
  const pick = (x?: RunSettings) =>
    [x?.agent, x?.model, x?.effort && x.effort !== 'default' ? `${x.effort} effort` : '', x?.context === 'long' ? 'long context' : '']
      .filter(Boolean)
      .join(' · ');
  const asked = pick(s.resolved) || pick(s.requested);
  const seen = s.observed?.model && s.observed.model !== 'not_reported' ? `observed model ${s.observed.model}` : '';
  return [asked, seen].filter(Boolean).join('; ');
}

/** The id the queue routes take for a queued message. */
export function queuedId(q: SessionItem): string {
  return q.id || q.jobId || '';
}

export const SESSION_STATUS: Record<string, string> = {
  working: 'Working',
  waiting: 'Waiting for you',
  queued: 'Queued',
  idle: 'Idle',
};

export const STEP_MARK: Record<string, string> = {
  pass: '✓',
  done: '✓',
  fail: '✗',
  blocked: '!',
  unverified: '?',
};

/** A step's state as a person reads it: its outcome once it has one, else where it stands. */
export function stepState(s: PlanStep): string {
  if (s.outcome && s.outcome !== 'unknown') return s.outcome;
  if (s.heldBy && (!Array.isArray(s.heldBy) || s.heldBy.length)) return 'held';
  return s.status || 'waiting';
}

export const workApi = {
  control: (sessionId: string, body: { action: 'queue' | 'steer' | 'replace' | 'stop'; prompt?: string; queued?: 'keep' | 'drop' }) =>
    request<{ ok: boolean; jobId?: string }>('POST', `/api/node/sessions/${encodeURIComponent(sessionId)}/control`, body),
  dropQueued: (sessionId: string, jobId: string) =>
    request<unknown>('DELETE', `/api/node/sessions/${encodeURIComponent(sessionId)}/queue/${encodeURIComponent(jobId)}`),
  stopPlan: (missionId: string) => request<unknown>('POST', `/api/node/plans/${encodeURIComponent(missionId)}/stop`, {}),
  handOver: (sessionId: string, nodeId: string) =>
    request<{ ok: boolean; nodeId: string }>('POST', `/api/node/sessions/${encodeURIComponent(sessionId)}/hand-over`, { nodeId }),
  deleteSession: (sessionId: string) => request<unknown>('DELETE', `/api/node/sessions/${encodeURIComponent(sessionId)}`),
};
