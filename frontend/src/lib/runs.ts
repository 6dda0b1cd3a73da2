// Runs (jobs) of coding agents on tasks: their shapes, and the pure logic that turns a run's
// trace (its events, read from GET /api/events/log and followed on the page's one stream) into
// the rows the task page shows.

import { RUN_ENDED_STATUSES, RUN_STATUSES } from './catalog.gen';
import {
  RUN_CREATED,
  RUN_DECISION,
  RUN_ENDED,
  RUN_ERROR,
  RUN_EVIDENCE,
  RUN_KINDS,
  RUN_MESSAGE,
  RUN_NOTE,
  RUN_QUESTION,
  RUN_REPORT,
  RUN_RETRY,
  RUN_SESSION_GONE,
  RUN_STARTED,
  RUN_STATUS,
  RUN_THINKING,
  RUN_TOOL_END,
  RUN_TOOL_START,
  RUN_USAGE,
} from './events.gen';
import type { LiveEvent } from './types';

/** A run's status (jobs.Statuses, generated). */
export type RunStatus = (typeof RUN_STATUSES)[number];

/** The statuses of a run still going: every one not over. */
const GOING: readonly string[] = RUN_STATUSES.filter((s) => !(RUN_ENDED_STATUSES as readonly string[]).includes(s));

export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cacheRead?: number;
  cacheWrite?: number;
  costUsd?: number;
}

export interface RunSettings {
  mode: 'ask' | 'review' | 'unattended';
  trusted: boolean;
  sandbox: boolean;
  outside: 'none' | 'read' | 'readwrite';
  git: 'local' | 'commit' | 'any';
  askBeforeCommit?: boolean;
  internet: boolean;
  maxMinutes: number;
  maxTurns: number;
  model: string;
  effort: string;
  /** '' the model's standard context window, 'long' its long one. */
  contextTier?: ContextTier;
  fast?: boolean;
}

export type ContextTier = '' | 'long';

export interface ReportCheck {
  name: string;
  verdict: 'pass' | 'fail' | 'skip' | string;
  note?: string;
  evidence?: string[];
}

export interface Report {
  outcome: 'done' | 'pass' | 'fail' | 'blocked' | string;
  summary: string;
  checks?: ReportCheck[];
  subject?: { commit?: string; contentHash?: string };
  evidence?: string[];
  blockedBy?: string;
}

export interface FileChange {
  path: string;
  added: number;
  removed: number;
}

/** A run's settings as its agent reported them (spec 003 §3.4), never filled in from what was asked. */
export interface Observed {
  model?: string;
  effort?: string;
  /** The context window, in tokens. */
  contextTokens?: number;
}

export interface Job {
  id: string;
  taskId: string;
  agent: string;
  brief: string;
  status: RunStatus;
  settings: RunSettings;
  folderKind: 'folder' | 'worktree' | 'workspace';
  folder: string;
  workDir: string;
  branch?: string;
  sessionId?: string;
  continues?: string;
  model?: string;
  /** What the agent itself reported it runs with; absent fields it did not report. */
  observed?: Observed;
  summary: string;
  report?: Report;
  error?: string;
  usage: Usage;
  turns: number;
  steps: number;
  attempts: number;
  changes?: FileChange[];
  createdAt: string;
  startedAt: string | null;
  endedAt: string | null;
  updatedAt: string;
}

/** The data of every run event. */
export interface Trace {
  runId: string;
  taskId?: string;
  agent?: string;
  status?: string;
  reason?: string;
  text?: string;
  step?: number;
  tool?: string;
  toolId?: string;
  input?: string;
  output?: string;
  failed?: boolean;
  durationMs?: number;
  decision?: string;
  rule?: string;
  usage?: Usage;
  session?: string;
  model?: string;
  attempt?: number;
  retryInMs?: number;
  summary?: string;
  turns?: number;
  /** On run.started and each run.tool_start: which OS sandbox confines the run (or the step). */
  sandbox?: Enforcement;
  /** On run.tool_end: its output says the OS sandbox stopped the command. */
  sandboxStopped?: boolean;
}

/** Which OS sandbox confines a run or a step (engines.Enforcement): "" by for none. */
export interface Enforcement {
  by?: string;
  whole?: boolean;
  note: string;
}

/** A step's sandbox in a word or two, for its row: "sandboxed", "not sandboxed". */
export function sandboxWord(e: Enforcement | undefined): string {
  if (!e) return '';
  return e.by ? 'sandboxed' : 'not sandboxed';
}

/** The run event kinds, as the event stream names them (generated from the runtime's). */
export const RUN_EVENT_KINDS = RUN_KINDS;

export const RUN_STATUS_LABEL: Record<RunStatus, string> = {
  queued: 'Queued',
  running: 'Running',
  paused: 'Paused',
  done: 'Done',
  failed: 'Failed',
  stopped: 'Stopped',
  stuck: 'Stuck',
  limit: 'Limit reached',
  interrupted: 'Interrupted',
};

export function runStatusLabel(s: string): string {
  return RUN_STATUS_LABEL[s as RunStatus] ?? s;
}

export function isEnded(s: string): boolean {
  return !GOING.includes(s);
}

// ---------- formatting ----------

/** 950 → "950", 12_345 → "12.3k", 2_500_000 → "2.5M". */
export function formatTokens(n: number | undefined | null): string {
  const v = Number(n) || 0;
  if (v < 1000) return String(Math.round(v));
  if (v < 999_950) return trimZero((v / 1000).toFixed(v < 10_000 ? 2 : 1)) + 'k';
  return trimZero((v / 1_000_000).toFixed(v < 10_000_000 ? 2 : 1)) + 'M';
}

function trimZero(s: string): string {
  return s.includes('.') ? s.replace(/\.?0+$/, '') : s;
}

/** Dollars: "" for none, "<$0.01", "$0.42", "$12.30", "$1,204". */
export function formatCost(usd: number | undefined | null): string {
  const v = Number(usd) || 0;
  if (v <= 0) return '';
  if (v < 0.01) return '<$0.01';
  if (v < 1000) return '$' + v.toFixed(2);
  return '$' + Math.round(v).toLocaleString('en-US');
}

/** All the tokens a run used: input, output and cache. */
export function totalTokens(u: Usage | undefined | null): number {
  if (!u) return 0;
  return (u.inputTokens || 0) + (u.outputTokens || 0) + (u.cacheRead || 0) + (u.cacheWrite || 0);
}

/** "12.3k tokens · $0.42", or "" when nothing was used yet. */
export function formatUsage(u: Usage | undefined | null): string {
  const t = totalTokens(u);
  if (!t && !u?.costUsd) return '';
  const parts = [`${formatTokens(t)} tokens`];
  const c = formatCost(u?.costUsd);
  if (c) parts.push(c);
  return parts.join(' · ');
}

/** 850 → "0.9 s", 12_000 → "12 s", 125_000 → "2 min 5 s", 3_720_000 → "1 h 2 min". */
export function formatDuration(ms: number | undefined | null): string {
  const v = Math.max(0, Number(ms) || 0);
  if (v < 9_950) return `${(Math.round(v / 100) / 10).toFixed(1)} s`;
  const s = Math.round(v / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return s % 60 ? `${m} min ${s % 60} s` : `${m} min`;
  const h = Math.floor(m / 60);
  return m % 60 ? `${h} h ${m % 60} min` : `${h} h`;
}

/** Text with `code` spans split out, for showing commands and paths as code. */
export function codeSpans(text: string): { code: boolean; text: string }[] {
  const out: { code: boolean; text: string }[] = [];
  const parts = text.split('`');
  if (parts.length % 2 === 0) return [{ code: false, text }]; // an unmatched backtick: as it is
  parts.forEach((p, i) => {
    if (p) out.push({ code: i % 2 === 1, text: p });
  });
  return out;
}

/** The model a run runs with: the one its agent reported, else the one asked for, marked "(asked)". */
export function runModel(j: Pick<Job, 'model' | 'observed' | 'settings'>): string {
  const reported = j.observed?.model || j.model;
  if (reported) return reported;
  return `${j.settings?.model || 'default model'} (asked)`;
}

/**
 * What a run runs with, on one line: "gpt-5.5 · thinking high · 258.4k context". Until the agent
 * starts there is only the model asked for; after, what the agent does not say is "not reported".
 */
export function runSettingsLine(j: Pick<Job, 'status' | 'model' | 'observed' | 'settings'>): string {
  const model = runModel(j);
  if (j.status === 'queued') return model;
  const o = j.observed ?? {};
  const effort = o.effort ? `thinking ${o.effort}` : 'thinking not reported';
  const context = o.contextTokens ? `${formatTokens(o.contextTokens)} context` : 'context not reported';
  return [model, effort, context].join(' · ');
}

/**
 * A run's rules as a person reads them: "Ask mode; internet on, sandboxed; may read outside its
 * folder; no commits" (the words of the run's first event, from the server).
 */
export function settingsSentence(s: Partial<RunSettings> | undefined | null): string {
  if (!s) return '';
  const mode = s.mode === 'review' ? 'Review only' : s.mode === 'unattended' ? 'Run unattended' : 'Ask mode';
  const net = `internet ${s.internet ? 'on' : 'off'}, ${s.sandbox ? 'sandboxed' : 'no sandbox'}`;
  const outside =
    s.outside === 'none' ? 'stays in its folder' : s.outside === 'readwrite' ? 'may change files outside its folder' : 'may read outside its folder';
  const git = s.git === 'commit' ? 'may commit, not push' : s.git === 'any' ? 'may commit and push' : 'no commits';
  const parts = [mode, net, outside, git];
  if (s.askBeforeCommit && (s.git === 'commit' || s.git === 'any')) parts.push('asks before each commit');
  if (s.trusted) parts.push('trusted folder');
  return parts.join('; ');
}

/** The newest run of each task, of the runs given (any order). */
export function latestByTask(jobs: readonly Pick<Job, 'id' | 'taskId' | 'createdAt'>[]): Map<string, string> {
  const best = new Map<string, { id: string; at: string }>();
  for (const j of jobs) {
    const b = best.get(j.taskId);
    if (!b || j.createdAt > b.at || (j.createdAt === b.at && j.id > b.id)) best.set(j.taskId, { id: j.id, at: j.createdAt });
  }
  return new Map([...best].map(([t, b]) => [t, b.id]));
}

/** What a board card says of its task's newest run: "claude · Running". */
export function cardRunText(j: Pick<Job, 'agent' | 'status'>): string {
  return `${j.agent} · ${runStatusLabel(j.status)}`;
}

// ---------- the trace ----------

export type RowKind =
  | 'note' // created, status, started, session gone, retry
  | 'message'
  | 'thinking'
  | 'tool'
  | 'decision'
  | 'question'
  | 'error'
  | 'evidence'
  | 'report'
  | 'ended';

export interface Row {
  key: string;
  /** The event kind that made (or last changed) the row: its data-kind. */
  kind: string;
  type: RowKind;
  text: string;
  /** Smaller text under or beside the row's text: a reason, a status. */
  detail?: string;
  // Tool calls.
  tool?: string;
  toolId?: string;
  step?: number;
  input?: string;
  output?: string;
  failed?: boolean;
  done?: boolean;
  durationMs?: number;
  /** What confined the step, and whether the sandbox stopped it. */
  sandbox?: Enforcement;
  sandboxStopped?: boolean;
  /** allow, refuse, ask; answered: allow, allow_run, deny; questions: ask, answered, recommended. */
  decision?: string;
  status?: string;
}

export interface TraceState {
  rows: Row[];
  status: string;
  usage: Usage | null;
  model: string;
  /** The last event seq applied: replays after a reconnect skip what is already here. */
  seq: number;
  /** Rows of open tool calls, by toolId (or "step:N"). */
  open: Record<string, number>;
  /** An ask on Needs me not yet answered. */
  waiting: boolean;
}

export function emptyTrace(): TraceState {
  return { rows: [], status: '', usage: null, model: '', seq: 0, open: {}, waiting: false };
}

function callKey(t: Trace): string {
  return t.toolId ? `id:${t.toolId}` : `step:${t.step ?? 0}`;
}

/** A tool call's input as one line: a command, a path, or the JSON squeezed. */
export function inputSummary(input: string | undefined, max = 140): string {
  if (!input) return '';
  let s = input;
  try {
    const v = JSON.parse(input) as unknown;
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      const o = v as Record<string, unknown>;
      const first = ['command', 'file_path', 'path', 'url', 'pattern', 'query', 'description']
        .map((k) => o[k])
        .find((x) => typeof x === 'string' && x.trim());
      if (typeof first === 'string') s = first;
    } else if (typeof v === 'string') s = v;
  } catch {
    // not JSON: as it is
  }
  s = s.replace(/\s+/g, ' ').trim();
  return s.length > max ? s.slice(0, max - 1) + '…' : s;
}

/** Pretty JSON when the text is JSON; otherwise the text. */
export function prettyInput(input: string | undefined): string {
  if (!input) return '';
  try {
    const v = JSON.parse(input) as unknown;
    if (v && typeof v === 'object') return JSON.stringify(v, null, 2);
  } catch {
    // not JSON
  }
  return input;
}

const DECISION_TEXT: Record<string, string> = {
  refuse: 'Refused',
  ask: 'Asked you',
  allow: 'You allowed it once',
  allow_run: 'You allowed it for this run',
  deny: 'You refused it',
};

function isTrace(v: unknown): v is Trace {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Applies one run event to the trace and returns the new state (the input is not changed).
 * Events with a seq at or below the last one applied are skipped (a replay after a reconnect).
 * A tool call's start and end become one row; usage updates the totals and makes no row.
 */
export function applyRunEvent(st: TraceState, ev: LiveEvent): TraceState {
  if (ev.seq !== undefined && ev.seq <= st.seq) return st;
  if (!isTrace(ev.data)) return st;
  const t = ev.data;
  const next: TraceState = { ...st, seq: ev.seq ?? st.seq };
  const key = ev.seq !== undefined ? `e${ev.seq}` : `r${st.rows.length}`;
  const add = (row: Omit<Row, 'key' | 'kind'>) => {
    next.rows = [...st.rows, { key, kind: ev.kind, ...row }];
  };
  switch (ev.kind) {
    case RUN_CREATED:
      next.status = t.status || 'queued';
      add({ type: 'note', text: t.text || `Assigned to ${t.agent ?? 'an agent'}.` });
      break;
    case RUN_STATUS:
      if (t.status) next.status = t.status;
      if (t.status === 'running' && st.status === 'queued') break; // "started" says it better
      if (t.status && isEnded(t.status)) break; // run.ended says it, with the summary
      add({ type: 'note', text: runStatusLabel(t.status ?? ''), detail: t.reason, status: t.status });
      break;
    case RUN_STARTED: {
      if (t.model) next.model = t.model;
      const bits = [t.model && `model ${t.model}`, t.attempt && t.attempt > 1 && `attempt ${t.attempt}`].filter(Boolean);
      add({ type: 'note', text: 'The agent started' + (bits.length ? ` (${bits.join(', ')})` : '') + '.' });
      break;
    }
    case RUN_MESSAGE:
      add({ type: 'message', text: t.text ?? '' });
      break;
    case RUN_THINKING:
      add({ type: 'thinking', text: t.text ?? '' });
      break;
    case RUN_TOOL_START: {
      const k = callKey(t);
      next.open = { ...st.open, [k]: st.rows.length };
      add({ type: 'tool', text: t.tool ?? 'tool', tool: t.tool, toolId: t.toolId, step: t.step, input: t.input, done: false, sandbox: t.sandbox });
      break;
    }
    case RUN_TOOL_END: {
      const k = callKey(t);
      const i = st.open[k];
      const end = { output: t.output, failed: !!t.failed, done: true, durationMs: t.durationMs, sandboxStopped: !!t.sandboxStopped };
      if (i !== undefined && st.rows[i]) {
        const rows = st.rows.slice();
        rows[i] = { ...rows[i], ...end, kind: ev.kind };
        next.rows = rows;
        const open = { ...st.open };
        delete open[k];
        next.open = open;
      } else {
        add({ type: 'tool', text: t.tool ?? 'tool', tool: t.tool, toolId: t.toolId, step: t.step, ...end });
      }
      break;
    }
    case RUN_DECISION: {
      const d = t.decision ?? '';
      next.waiting = d === 'ask';
      const what = t.input ? inputSummary(t.input) : (t.tool ?? '');
      add({
        type: 'decision',
        decision: d,
        text: (DECISION_TEXT[d] ?? d) + (what && (d === 'ask' || d === 'refuse') ? `: ${what}` : ''),
        detail: t.reason,
        tool: t.tool,
        input: t.input,
      });
      break;
    }
    case RUN_QUESTION: {
      const d = t.decision ?? '';
      next.waiting = d === 'ask';
      const text =
        d === 'answered' ? `You answered: ${t.reason || '(no text)'}` : d === 'recommended' ? (t.reason ?? '') : t.text ?? '';
      add({ type: 'question', decision: d, text, detail: d === 'ask' ? 'Waiting for you on Needs me' : t.text });
      break;
    }
    case RUN_USAGE:
      if (t.usage) next.usage = t.usage;
      break;
    case RUN_ERROR:
      add({ type: 'error', text: t.text ?? 'The agent reported an error.' });
      break;
    case RUN_RETRY:
      add({
        type: 'note',
        text: `Carrying on in ${formatDuration(t.retryInMs)}${t.attempt ? ` (try ${t.attempt})` : ''}.`,
        detail: t.text,
        failed: true,
      });
      break;
    case RUN_SESSION_GONE:
      add({ type: 'note', text: 'The agent session could not be reopened; a new one starts with the full brief.', detail: t.reason || t.text });
      break;
    case RUN_NOTE:
      add({ type: 'note', text: t.text ?? '' });
      break;
    case RUN_EVIDENCE:
      add({ type: 'evidence', text: t.input ?? 'a file', detail: [t.text, t.reason].filter(Boolean).join(' · ') });
      break;
    case RUN_REPORT:
      add({ type: 'report', text: t.text ?? '', status: t.status });
      break;
    case RUN_ENDED:
      if (t.status) next.status = t.status;
      if (t.usage) next.usage = t.usage;
      next.waiting = false;
      next.open = {};
      // Calls still open when the run ended never returned.
      if (Object.keys(st.open).length) {
        const rows = st.rows.map((r) => (r.type === 'tool' && !r.done ? { ...r, done: true, failed: true } : r));
        next.rows = [...rows, { key, kind: ev.kind, type: 'ended', text: runStatusLabel(t.status ?? ''), detail: t.reason, status: t.status, output: t.summary }];
      } else {
        add({ type: 'ended', text: runStatusLabel(t.status ?? ''), detail: t.reason || t.text, status: t.status, output: t.summary });
      }
      break;
    default:
      return st;
  }
  return next;
}

/** A page of the event log (GET /api/events/log). */
export interface LogPage {
  events: LiveEvent[];
  more: boolean;
}

export interface FollowOptions {
  jobId: string;
  /** Subscribes to the page's one live stream; returns the unsubscribe. */
  subscribe: (fn: (ev: LiveEvent) => void) => () => void;
  /** Reads the run's events after seq from the log. */
  readLog: (after: number) => Promise<LogPage>;
  onTrace: (t: TraceState) => void;
  retryMs?: number;
}

/** Whether a live event belongs to run jobId's trace. */
export function isRunEventOf(ev: LiveEvent, jobId: string): boolean {
  return ev.kind.startsWith('run.') && isTrace(ev.data) && ev.data.runId === jobId;
}

/**
 * Follows one run's trace on the page's shared stream: it subscribes first, reads the run's
 * events from the log from its start, then applies what the stream brought meanwhile and after,
 * skipping by seq what the log already gave. reload reads the trace again from its start (after
 * the stream missed events).
 */
export function followRun(o: FollowOptions): { reload: () => void; close: () => void } {
  let st = emptyTrace();
  let held: LiveEvent[] | null = [];
  let closed = false;
  let gen = 0;
  let timer: ReturnType<typeof setTimeout> | null = null;
  const off = o.subscribe((ev) => {
    if (closed || !isRunEventOf(ev, o.jobId)) return;
    if (held) held.push(ev);
    else {
      st = applyRunEvent(st, ev);
      o.onTrace(st);
    }
  });
  const load = async () => {
    const mine = ++gen;
    held ??= [];
    let next = emptyTrace();
    let after = 0;
    try {
      for (;;) {
        const page = await o.readLog(after);
        if (closed || mine !== gen) return;
        next = reduceTrace(page.events, next);
        for (const ev of page.events) after = Math.max(after, ev.seq ?? after);
        if (!page.more || page.events.length === 0) break;
      }
    } catch {
      if (!closed && mine === gen) timer = setTimeout(load, o.retryMs ?? 2000);
      return;
    }
    st = reduceTrace(held, next);
    held = null;
    o.onTrace(st);
  };
  void load();
  return {
    reload: () => {
      if (timer) clearTimeout(timer);
      void load();
    },
    close: () => {
      closed = true;
      if (timer) clearTimeout(timer);
      off();
    },
  };
}

export function reduceTrace(events: readonly LiveEvent[], st: TraceState = emptyTrace()): TraceState {
  return events.reduce(applyRunEvent, st);
}

export interface StepCount {
  steps: number;
  failed: number;
  running: number;
}

/** How many tool calls the trace holds, how many failed and how many are still going. */
export function countSteps(rows: readonly Row[]): StepCount {
  let steps = 0,
    failed = 0,
    running = 0;
  for (const r of rows) {
    if (r.type !== 'tool') continue;
    steps++;
    if (r.failed) failed++;
    if (!r.done) running++;
  }
  return { steps, failed, running };
}

/** "8 steps · 1 failed", "1 step", "" for none. */
export function stepsLine(c: StepCount): string {
  if (!c.steps) return '';
  const parts = [`${c.steps} ${c.steps === 1 ? 'step' : 'steps'}`];
  if (c.failed) parts.push(`${c.failed} failed`);
  if (c.running) parts.push(`${c.running} running`);
  return parts.join(' · ');
}

export type Item = { type: 'row'; row: Row } | { type: 'fold'; key: string; rows: Row[] };

/**
 * Groups the rows for showing: once a trace has more than four tool calls, a run of three or more
 * finished, successful tool calls in a row folds into one "N steps" item that opens in place.
 */
export function foldRows(rows: readonly Row[], minRun = 3, after = 4): Item[] {
  const out: Item[] = [];
  if (countSteps(rows).steps <= after) return rows.map((row) => ({ type: 'row', row }));
  let run: Row[] = [];
  const flush = () => {
    if (run.length >= minRun) out.push({ type: 'fold', key: `f-${run[0].key}`, rows: run });
    else for (const row of run) out.push({ type: 'row', row });
    run = [];
  };
  for (const row of rows) {
    if (row.type === 'tool' && row.done && !row.failed) run.push(row);
    else {
      flush();
      out.push({ type: 'row', row });
    }
  }
  flush();
  return out;
}

// ---------- assigning ----------

export const AGENTS = ['claude', 'codex', 'opencode', 'gemini'] as const;

export interface AssignForm {
  agent: string;
  folder: string;
  worktree: boolean;
  mode: RunSettings['mode'];
  trusted: boolean;
  sandbox: boolean;
  internet: boolean;
  git: RunSettings['git'];
  outside: RunSettings['outside'];
  maxMinutes: string | number | null;
  maxTurns: string | number | null;
  model: string;
  effort: string;
  contextTier: ContextTier;
  fast: boolean;
}

export const DEFAULT_FORM: AssignForm = {
  agent: 'claude',
  folder: '',
  worktree: false,
  mode: 'ask',
  trusted: false,
  sandbox: true,
  internet: true,
  git: 'local',
  outside: 'read',
  maxMinutes: '',
  maxTurns: '',
  model: '',
  effort: '',
  contextTier: '',
  fast: false,
};

/** A form filled in from an earlier run, to run it again or to start from. */
export function formFromJob(j: Job): AssignForm {
  const s = j.settings;
  return {
    agent: j.agent,
    folder: j.folderKind === 'workspace' ? '' : j.folder,
    worktree: j.folderKind === 'worktree',
    mode: s.mode,
    trusted: s.trusted,
    sandbox: s.sandbox,
    internet: s.internet,
    git: s.git,
    outside: s.outside,
    maxMinutes: s.maxMinutes ? String(s.maxMinutes) : '',
    maxTurns: s.maxTurns ? String(s.maxTurns) : '',
    model: s.model ?? '',
    effort: s.effort ?? '',
    contextTier: s.contextTier === 'long' ? 'long' : '',
    fast: s.fast === true,
  };
}

export interface AssignBody {
  taskId?: string;
  title?: string;
  continue?: string;
  /** A run profile's id: its agent, folder and settings apply where the body names none. */
  profile?: string;
  agent?: string;
  folder?: string;
  worktree?: boolean;
  settings: Record<string, string | number | boolean>;
}

/**
 * The body of POST /api/agent/assign for a form. A limit that is not a whole number is sent as
 * typed, so the server says what is wrong with it; empty limits, model and effort, the standard
 * context window and fast mode off are left out.
 */
export function assignBody(target: { taskId: string } | { title: string; continue: string }, f: AssignForm): AssignBody {
  const settings: AssignBody['settings'] = {
    mode: f.mode,
    trusted: f.trusted,
    sandbox: f.sandbox,
    internet: f.internet,
    git: f.git,
    outside: f.outside,
  };
  for (const k of ['maxMinutes', 'maxTurns'] as const) {
    const v = String(f[k] ?? '').trim();
    if (v) settings[k] = /^\d+$/.test(v) ? Number(v) : (v as unknown as number);
  }
  const model = (f.model ?? '').trim();
  const effort = (f.effort ?? '').trim();
  const folder = (f.folder ?? '').trim();
  if (model) settings.model = model;
  if (effort) settings.effort = effort;
  if (f.contextTier === 'long') settings.contextTier = 'long';
  if (f.fast) settings.fast = true;
  const body: AssignBody = { ...target, agent: (f.agent ?? '').trim(), settings };
  if (folder) body.folder = folder;
  if (f.worktree) body.worktree = true;
  return body;
}

/** Newest run first. */
export function sortJobs(jobs: readonly Job[]): Job[] {
  return [...jobs].sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : a.id < b.id ? 1 : -1));
}

/** Puts a job into the list (replacing the copy with its id), newest first. */
export function upsertJob(jobs: readonly Job[], j: Job): Job[] {
  return sortJobs([...jobs.filter((x) => x.id !== j.id), j]);
}
