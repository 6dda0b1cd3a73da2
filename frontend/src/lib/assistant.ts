// The assistant: its turn stream (POST /api/assistant/turn answers server-sent events), the state
// of a live turn as those events arrive, conversations, Apply and Undo, and its settings. Shapes
// from runtime/assistant/service.go and runtime/api/assistant.go.

import { PLANS as GEN_PLANS } from './catalog.gen';
import { ApiError, errorSentence, notifyUnauthorized, request, UNREACHABLE } from './api';
import { holdBack, mergeRefs, recordOptions, type Ref } from './assistant-refs';
import { renderMarkdown } from './markdown';
import type { Route } from './route';
import type { Agent } from './settings';
import { apiURL } from './session';

export type { Ref } from './assistant-refs';

export type ToolStatus = 'running' | 'done' | 'error' | 'proposed' | 'waiting' | 'discarded';

/** One tool call of a turn as the person sees it. */
export interface ToolRow {
  callId: string;
  name: string;
  isWrite?: boolean;
  status: ToolStatus;
  summary?: string;
  refs?: Ref[];
  /** The Undo group of a write that landed. */
  group?: string;
  /** A write held for Apply ("proposed"). */
  proposalId?: string;
  preview?: string;
  undone?: boolean;
  /** Set here when this window applied the proposal; see [isApplied] for every client. */
  applied?: boolean;
  /** The part of Ensemble the tool works in: tasks, pages, agents… */
  area?: string;
  /** A write's risk: low, medium or high. */
  risk?: 'low' | 'medium' | 'high';
  /** The write cannot be undone (it started an agent run). */
  noUndo?: boolean;
}

export interface Reply {
  conversationId: string;
  text: string;
  tools: ToolRow[] | null;
}

export type ErrorKind = 'failed' | 'timeout' | 'stopped';

export interface Message {
  id: string;
  role: 'user' | 'assistant';
  text: string;
  /** A failed turn: its sentence (or true, when text is the sentence). */
  error?: string | boolean;
  errorKind?: ErrorKind;
  stopped?: boolean;
  tools?: ToolRow[] | null;
  /** The records the reply may name by id (the turn's "refs" frame, or saved with it). */
  refs?: Ref[] | null;
  at?: string;
}

export interface ConversationSummary {
  id: string;
  title: string;
  updatedAt: string;
  messages?: number;
  busy?: boolean;
}

export interface Conversation {
  id: string;
  title: string;
  updatedAt?: string;
  busy?: boolean;
  messages: Message[] | null;
}

/** A model provider with an API (a key, or Ollama on this computer). */
export type ApiProvider = 'anthropic' | 'openai' | 'ollama';
/** The person's own AI plan: its agent does the thinking on this computer with its own sign-in (spec 003 §8). */
export type PlanProvider = (typeof GEN_PLANS)[number]['id'];
export type Provider = ApiProvider | PlanProvider;
export type WritePolicy = 'immediate' | 'preview' | 'needs-me';

export interface AssistantSettings {
  provider: Provider;
  model: string;
  baseUrl: string;
  effort: string;
  writePolicy: WritePolicy;
  /** The areas the assistant may change (all by default); a write of another waits for nothing: it is not offered. */
  allowedWriteAreas: WriteArea[];
}

export type WriteArea = 'tasks' | 'pages' | 'projects' | 'people' | 'repos' | 'agents' | 'workflows';

/** The areas whose changes the person can allow, in the runtime's order. */
export const WRITE_AREAS: { id: WriteArea; name: string }[] = [
  { id: 'tasks', name: 'Tasks' },
  { id: 'pages', name: 'Pages' },
  { id: 'projects', name: 'Projects' },
  { id: 'people', name: 'People' },
  { id: 'repos', name: 'Repositories' },
  { id: 'agents', name: 'Giving tasks to agents' },
  { id: 'workflows', name: 'Several changes at once' },
];

/** A list of write areas kept to the known ones, in WRITE_AREAS' order; all when it is not a list. */
export function normalizeAreas(v: unknown): WriteArea[] {
  if (!Array.isArray(v)) return WRITE_AREAS.map((a) => a.id);
  return WRITE_AREAS.map((a) => a.id).filter((id) => v.includes(id));
}

export interface ProviderInfo {
  id: string;
  name: string;
  hasKey?: boolean;
  /** Where the key comes from: "settings" (saved here), "environment", or "" for none. */
  keyFrom?: string;
  baseUrl?: string;
  /** Ollama: whether it answered on this computer. */
  found?: boolean;
  models?: string[] | null;
}

// ---------- server-sent events ----------

export interface SSEFrame {
  event: string;
  data: string;
  id?: string;
}

/**
 * An incremental parser for a text/event-stream body (the WHATWG rules): feed it chunks as they
 * arrive, in any split, and it returns the frames each chunk completes. Comment lines (": keepalive")
 * are skipped; a frame without an "event:" line is a "message".
 */
export class SSEParser {
  private buf = '';
  private event = '';
  private data: string[] = [];
  private id: string | undefined;
  private started = false;

  push(chunk: string): SSEFrame[] {
    this.buf += chunk;
    if (!this.started && this.buf.length) {
      if (this.buf.charCodeAt(0) === 0xfeff) this.buf = this.buf.slice(1);
      this.started = true;
    }
    const out: SSEFrame[] = [];
    for (;;) {
      const m = /\r\n|\r|\n/.exec(this.buf);
      if (!m) break;
      // A lone \r at the end of the buffer may be the first half of \r\n: wait for more.
      if (m[0] === '\r' && m.index === this.buf.length - 1) break;
      const line = this.buf.slice(0, m.index);
      this.buf = this.buf.slice(m.index + m[0].length);
      this.line(line, out);
    }
    return out;
  }

  /** Ends the stream: a frame not closed by a blank line is dropped, as the standard says. */
  end(): SSEFrame[] {
    this.buf = '';
    this.event = '';
    this.data = [];
    return [];
  }

  private line(line: string, out: SSEFrame[]) {
    if (line === '') {
      if (this.data.length) out.push({ event: this.event || 'message', data: this.data.join('\n'), ...(this.id !== undefined ? { id: this.id } : {}) });
      this.event = '';
      this.data = [];
      return;
    }
    if (line.startsWith(':')) return;
    const i = line.indexOf(':');
    const field = i < 0 ? line : line.slice(0, i);
    let value = i < 0 ? '' : line.slice(i + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') this.event = value;
    else if (field === 'data') this.data.push(value);
    else if (field === 'id' && !value.includes('\0')) this.id = value;
  }
}

// ---------- a turn ----------

export type TurnEvent =
  | { type: 'conversation'; conversationId: string }
  | { type: 'refs'; refs: Ref[] }
  | { type: 'text'; text: string }
  | { type: 'tool'; tool: ToolRow }
  | { type: 'done'; reply: Reply }
  | { type: 'error'; error: string; kind: ErrorKind };

/** A frame of the turn stream as a TurnEvent, or null for one this client does not know. */
export function turnEvent(f: SSEFrame): TurnEvent | null {
  let d: Record<string, unknown>;
  try {
    d = JSON.parse(f.data);
  } catch {
    return null;
  }
  if (!d || typeof d !== 'object') return null;
  switch (f.event) {
    case 'conversation':
      return typeof d.conversationId === 'string' ? { type: 'conversation', conversationId: d.conversationId } : null;
    case 'refs':
      return { type: 'refs', refs: mergeRefs(Array.isArray(d.refs) ? (d.refs as Ref[]) : []) };
    case 'text':
      return typeof d.text === 'string' ? { type: 'text', text: d.text } : null;
    case 'tool':
      return d.tool && typeof (d.tool as ToolRow).callId === 'string' ? { type: 'tool', tool: d.tool as ToolRow } : null;
    case 'done':
      return d.reply && typeof d.reply === 'object' ? { type: 'done', reply: d.reply as Reply } : null;
    case 'error': {
      const kind = d.kind === 'timeout' || d.kind === 'stopped' ? d.kind : 'failed';
      return { type: 'error', error: typeof d.error === 'string' ? d.error : '', kind };
    }
  }
  return null;
}

export type TurnPhase = 'working' | 'done' | 'error';

/** A turn in progress (or just ended) in this window. */
export interface Turn {
  question: string;
  conversationId: string | null;
  phase: TurnPhase;
  text: string;
  tools: ToolRow[];
  /** The records the turn knows (its "refs" frames), for showing their ids as titles. */
  refs: Ref[];
  /** When the assistant started waiting on the model with nothing new to show (ms); null once text streams. */
  thinkingSince: number | null;
  error?: string;
  errorKind?: ErrorKind;
}

export function startTurn(question: string, conversationId: string | null, now: number): Turn {
  return { question, conversationId, phase: 'working', text: '', tools: [], refs: [], thinkingSince: now };
}

/** Puts row into rows: a row with the same callId is updated in place, a new one goes last. */
export function mergeTool(rows: readonly ToolRow[], row: ToolRow): ToolRow[] {
  const i = rows.findIndex((r) => r.callId === row.callId);
  if (i < 0) return [...rows, row];
  const next = [...rows];
  next[i] = { ...rows[i], ...row };
  return next;
}

/** The turn after one event. A turn that has ended takes no more events. */
export function applyTurnEvent(t: Turn, ev: TurnEvent, now: number): Turn {
  if (t.phase !== 'working') return t;
  switch (ev.type) {
    case 'conversation':
      return { ...t, conversationId: ev.conversationId };
    case 'refs':
      return { ...t, refs: mergeRefs(ev.refs, t.refs) };
    case 'text':
      return { ...t, text: t.text + ev.text, thinkingSince: ev.text.trim() ? null : t.thinkingSince };
    case 'tool': {
      const tools = mergeTool(t.tools, ev.tool);
      // While a tool runs its row shows the work; once it ends the model is thought to be thinking again.
      return { ...t, tools, thinkingSince: ev.tool.status === 'running' ? t.thinkingSince : t.text.trim() && t.thinkingSince === null ? null : now };
    }
    case 'done': {
      let tools = t.tools;
      for (const r of ev.reply.tools ?? []) tools = mergeTool(tools, r);
      return {
        ...t,
        phase: 'done',
        conversationId: ev.reply.conversationId || t.conversationId,
        text: t.text.trim() ? t.text.trim() : ev.reply.text,
        tools,
        thinkingSince: null,
      };
    }
    case 'error':
      return {
        ...t,
        phase: 'error',
        text: t.text.trim(),
        tools: t.tools.map((r) => (r.status === 'running' ? { ...r, status: 'error' } : r)),
        error: ev.error,
        errorKind: ev.kind,
        thinkingSince: null,
      };
  }
}

/** Whether to show "Thinking…": the turn is working, no text has streamed since, and no tool runs. */
export function isThinking(t: Turn): boolean {
  return t.phase === 'working' && t.thinkingSince !== null && !t.tools.some((r) => r.status === 'running');
}

/** "Thinking…", with the seconds once there are three or more. */
export function thinkingText(t: Turn, now: number): string {
  const s = t.thinkingSince === null ? 0 : Math.floor((now - t.thinkingSince) / 1000);
  return s >= 3 ? `Thinking… ${s}s` : 'Thinking…';
}

/** The one sentence a failed turn shows. */
export function errorText(error: string | undefined, kind: ErrorKind | undefined): string {
  if (kind === 'stopped') return 'Stopped.';
  const e = (error ?? '').trim();
  if (kind === 'timeout') return e || 'The model did not answer in time, so I stopped waiting. Ask again, or try a narrower question.';
  return e || 'The assistant could not answer. Ask again.';
}

/** A finished turn as the message the thread keeps showing until the saved one replaces it. */
export function turnMessages(t: Turn, at = new Date().toISOString()): Message[] {
  const q: Message = { id: `local-q-${at}`, role: 'user', text: t.question, at };
  const a: Message = { id: `local-a-${at}`, role: 'assistant', text: t.text, tools: t.tools, refs: t.refs, at };
  if (t.phase === 'error') {
    a.error = errorText(t.error, t.errorKind);
    a.errorKind = t.errorKind;
    if (t.errorKind === 'stopped') a.stopped = true;
  }
  return [q, a];
}

/** What a saved assistant message's error line says, or '' for none. */
export function messageError(m: Message): string {
  if (m.stopped || m.errorKind === 'stopped') return 'Stopped.';
  if (typeof m.error === 'string' && m.error) return errorText(m.error, m.errorKind);
  if (m.error === true) return errorText(m.text, m.errorKind);
  return '';
}

/** The text of an assistant message to render above its error line. */
export function messageBody(m: Message): string {
  return m.error === true && !m.stopped ? '' : m.text;
}

/** Whether a row is a held write that was applied (here or from another client, or Needs me). */
export function isApplied(r: ToolRow): boolean {
  return !!r.applied || (r.status === 'done' && !!r.proposalId);
}

/** Proposals ("proposed" rows not yet applied) among rows. */
export function proposals(rows: readonly ToolRow[] | null | undefined): ToolRow[] {
  return (rows ?? []).filter((r) => r.status === 'proposed' && !!r.proposalId);
}

/** The rows shown as receipts (everything but open proposals). */
export function receipts(rows: readonly ToolRow[] | null | undefined): ToolRow[] {
  return (rows ?? []).filter((r) => !(r.status === 'proposed' && !!r.proposalId));
}

/** A row of a reply's work as shown: one call, or a run of finished reads folded into "N steps". */
export type WorkItem = { kind: 'row'; row: ToolRow } | { kind: 'reads'; key: string; rows: ToolRow[] };

/** A finished call that changed nothing: a read. */
export function isFinishedRead(r: ToolRow): boolean {
  return !r.isWrite && r.status === 'done';
}

/**
 * rows as shown (spec 000 §6): once the reply has more than four calls (total, counting held
 * writes), every run of three or more finished reads folds into one "N steps" item; anything else
 * (a write, a failure, a call still running) stays a row of its own and breaks a run.
 */
export function foldReads(rows: readonly ToolRow[], total = rows.length): WorkItem[] {
  const out: WorkItem[] = [];
  const fold = total > 4;
  let run: ToolRow[] = [];
  const flush = () => {
    if (fold && run.length >= 3) out.push({ kind: 'reads', key: run[0].callId, rows: run });
    else for (const r of run) out.push({ kind: 'row', row: r });
    run = [];
  };
  for (const r of rows) {
    if (isFinishedRead(r)) run.push(r);
    else {
      flush();
      out.push({ kind: 'row', row: r });
    }
  }
  flush();
  return out;
}

/** The line of a folded run of reads: "3 steps". */
export function stepsLabel(n: number): string {
  return n === 1 ? '1 step' : `${n} steps`;
}

/** A held write after Discard: the row as the server keeps it. */
export function discardedRow(r: ToolRow): ToolRow {
  const what = r.preview || r.summary || toolLabel(r.name);
  return { ...r, status: 'discarded', summary: `Discarded: ${what}` };
}

/** Whether a row offers Undo (a landed write with a group) or Redo (after Undo). */
export function undoable(r: ToolRow): 'undo' | 'redo' | null {
  if (!r.isWrite || r.status !== 'done' || !r.group || r.noUndo) return null;
  return r.undone ? 'redo' : 'undo';
}

/** What a proposal's card says about its risk before Apply, or "" when there is nothing to say. */
export function riskNote(r: ToolRow): string {
  const parts: string[] = [];
  if (r.risk === 'high') parts.push('High risk');
  if (r.noUndo) parts.push('cannot be undone');
  const s = parts.join(', ');
  return s ? s[0].toUpperCase() + s.slice(1) : '';
}

/** "hub_create_tasks" as "Create tasks". */
export function toolLabel(name: string): string {
  const s = name.replace(/^hub_/, '').replace(/_/g, ' ').trim();
  return s ? s[0].toUpperCase() + s.slice(1) : name;
}

/** A one-line count of a reply's work: "3 steps · 1 change · 1 failed". */
export function workSummary(rows: readonly ToolRow[]): string {
  const n = rows.length;
  const changes = rows.filter((r) => r.isWrite && r.status === 'done' && !r.undone).length;
  const failed = rows.filter((r) => r.status === 'error').length;
  const parts = [n === 1 ? '1 step' : `${n} steps`];
  if (changes) parts.push(changes === 1 ? '1 change' : `${changes} changes`);
  if (failed) parts.push(`${failed} failed`);
  return parts.join(' · ');
}

/** The hash route a record link opens, or null for a kind the UI has no page for. */
export function recordHref(kind: string, id: string): string | null {
  if (!id) return null;
  if (kind === 'task') return `#/task/${encodeURIComponent(id)}`;
  return null;
}

/**
 * The open screen's path as the assistant's playbook routing reads it (TurnRequest.path): the board
 * "/board", a task "/tasks/<id>" (its run "/tasks/<id>/runs/<job>"), "/needs", "/settings[/section]".
 */
export function routePath(r: Route): string {
  switch (r.name) {
    case 'task':
      return `/tasks/${encodeURIComponent(r.id)}` + (r.run ? `/runs/${encodeURIComponent(r.run)}` : '');
    case 'needs':
      return '/needs';
    case 'settings':
      return r.section ? `/settings/${encodeURIComponent(r.section)}` : '/settings';
    default:
      return '/board';
  }
}

/**
 * A reply's text as HTML: records by title, linked to their pages (spec 000 §4.1), with the bare
 * ids of refs as titles unless question asked for ids. While live, a half-written record link or
 * id at the end waits for the rest.
 */
export function replyHtml(text: string, refs: readonly Ref[], question: string, live = false): string {
  return renderMarkdown(live ? holdBack(text, refs) : text, recordOptions(refs, question, recordHref));
}

/** messages with row merged into the message that holds its call. */
export function withRow(messages: readonly Message[], row: ToolRow): Message[] {
  return messages.map((m) => (m.tools?.some((r) => r.callId === row.callId) ? { ...m, tools: mergeTool(m.tools, row) } : m));
}

// ---------- settings ----------

export const PROVIDERS: { id: ApiProvider; name: string }[] = [
  { id: 'anthropic', name: 'Anthropic' },
  { id: 'openai', name: 'OpenAI (or compatible)' },
  { id: 'ollama', name: 'Ollama (on this computer)' },
];

export interface Plan {
  id: PlanProvider;
  /** The agent's name in GET /api/agents. */
  agent: string;
  /** The agent's name in sentences. */
  title: string;
  name: string;
  /** What an empty model means. */
  defaultModel: string;
}

/** The plans the assistant runs on (assistant.Plans, generated), in words. */
export const PLANS: Plan[] = GEN_PLANS.map((p) => ({
  id: p.id,
  agent: p.agent,
  title: p.title,
  name: `${p.title} — your plan`,
  defaultModel: `${p.title}’s default`,
}));

export function isPlan(p: string): p is PlanProvider {
  return PLANS.some((x) => x.id === p);
}

export function planOf(p: string): Plan | null {
  return PLANS.find((x) => x.id === p) ?? null;
}

function knownProvider(p: unknown): p is Provider {
  return typeof p === 'string' && (PROVIDERS.some((x) => x.id === p) || isPlan(p));
}

/** The agent behind a plan, when this computer has it installed. */
export function planAgent(p: string, agents: readonly Agent[] | null | undefined): Agent | null {
  const plan = planOf(p);
  return (plan && agents?.find((a) => a.name === plan.agent && a.installed)) || null;
}

/**
 * The provider menu: the API providers, then each plan whose agent this computer has (and the
 * saved provider, even when its agent is no longer found, so the form shows what is saved).
 */
export function providerOptions(agents: readonly Agent[] | null | undefined, current?: string): { id: Provider; name: string; missing?: boolean }[] {
  const out: { id: Provider; name: string; missing?: boolean }[] = [...PROVIDERS];
  for (const plan of PLANS) {
    if (planAgent(plan.id, agents)) out.push({ id: plan.id, name: plan.name });
    // Before the agents are known (null), a saved plan shows as itself.
    else if (plan.id === current) out.push(agents ? { id: plan.id, name: `${plan.name} (not found)`, missing: true } : { id: plan.id, name: plan.name });
  }
  return out;
}

/** A plan's sign-in as the settings show it: a tone, a sentence, and the command that signs in when it is needed. */
export function planStatus(p: string, agents: readonly Agent[] | null | undefined): { state: 'yes' | 'no' | 'unknown' | 'missing'; text: string; login?: string } {
  const plan = planOf(p);
  const a = planAgent(p, agents);
  if (!a) return { state: 'missing', text: `${plan?.title ?? 'The agent'} is not found on this computer.` };
  const login = a.login?.trim() || undefined;
  if (a.signedIn === 'yes') return { state: 'yes', text: 'Signed in' };
  if (a.signedIn === 'no') return { state: 'no', text: 'Not signed in', login };
  return { state: 'unknown', text: 'Sign-in is checked on first use', login };
}

/** The model names the plan's agent reports on this computer, for the model field's suggestions. */
export function planModels(p: string, agents: readonly Agent[] | null | undefined): string[] {
  const out: string[] = [];
  for (const m of planAgent(p, agents)?.models ?? []) {
    const id = typeof m === 'string' ? m : m?.id;
    if (id && !out.includes(id)) out.push(id);
  }
  return out;
}

export const EFFORTS: { id: string; name: string }[] = [
  { id: '', name: 'Model default' },
  { id: 'low', name: 'Low' },
  { id: 'medium', name: 'Medium' },
  { id: 'high', name: 'High' },
];

const EFFORT_NAMES: Record<string, string> = { none: 'None', minimal: 'Minimal', low: 'Low', medium: 'Medium', high: 'High', xhigh: 'Extra high', max: 'Max' };

/**
 * The efforts each plan's agent takes, from the runtime's plans. OpenCode's levels are its model's
 * own variants across its providers (one the chosen model does not take is left out of the turn);
 * Gemini CLI offers no thinking level Ensemble can set, only its own default.
 */
export const PLAN_EFFORTS = Object.fromEntries(GEN_PLANS.map((p) => [p.id, [...p.efforts]])) as Record<PlanProvider, string[]>;

/** The effort menu for a provider ("" first: the model's, or the plan's, default). */
export function effortsFor(p: string): { id: string; name: string }[] {
  if (!isPlan(p)) return EFFORTS;
  return [{ id: '', name: 'Default' }, ...PLAN_EFFORTS[p].map((id) => ({ id, name: EFFORT_NAMES[id] ?? id }))];
}

export const WRITE_POLICIES: { id: WritePolicy; name: string; note: string }[] = [
  { id: 'immediate', name: 'Just do it (undoable)', note: 'Changes happen at once; each one can be undone from the chat.' },
  { id: 'preview', name: 'Preview first', note: 'Changes wait in the chat until you press Apply.' },
  { id: 'needs-me', name: 'Ask on Needs me', note: 'Changes wait on the Needs me page until you approve them.' },
];

export const DEFAULT_SETTINGS: AssistantSettings = {
  provider: 'anthropic',
  model: '',
  baseUrl: '',
  effort: '',
  writePolicy: 'immediate',
  allowedWriteAreas: WRITE_AREAS.map((a) => a.id),
};

/** Settings as the runtime sent them, with anything missing or unknown set to its default. */
export function normalizeSettings(s: Partial<AssistantSettings> | null | undefined): AssistantSettings {
  const v = s ?? {};
  return {
    provider: knownProvider(v.provider) ? v.provider : DEFAULT_SETTINGS.provider,
    model: typeof v.model === 'string' ? v.model : '',
    baseUrl: typeof v.baseUrl === 'string' ? v.baseUrl : '',
    effort: typeof v.effort === 'string' ? v.effort : '',
    writePolicy: WRITE_POLICIES.some((p) => p.id === v.writePolicy) ? (v.writePolicy as WritePolicy) : 'immediate',
    allowedWriteAreas: normalizeAreas(v.allowedWriteAreas),
  };
}

/** Whether the provider takes a base URL in Settings. */
export function takesBaseUrl(p: Provider): boolean {
  return p === 'openai' || p === 'ollama';
}

/** Whether the provider takes an API key (a plan uses its agent's own sign-in; Ollama needs none). */
export function takesKey(p: Provider): boolean {
  return p === 'anthropic' || p === 'openai';
}

/**
 * The form after the person picks provider p: a base URL only where it is taken, an effort the new
 * menu has, and, moving to or from a plan, an empty model (a plan's empty model is its own default;
 * an API model's name rarely fits a plan).
 */
export function withProvider(s: AssistantSettings, p: Provider): AssistantSettings {
  if (s.provider === p) return s;
  const model = isPlan(p) !== isPlan(s.provider) ? '' : s.model;
  const effort = effortsFor(p).some((e) => e.id === s.effort) ? s.effort : '';
  return { ...s, provider: p, model, effort, baseUrl: takesBaseUrl(p) ? s.baseUrl : '' };
}

/** Settings ready to save, or the sentence saying what to fix. */
export function validateSettings(s: AssistantSettings): { ok: true; value: AssistantSettings } | { ok: false; error: string; field: keyof AssistantSettings } {
  const value: AssistantSettings = {
    ...s,
    model: s.model.trim(),
    baseUrl: takesBaseUrl(s.provider) ? s.baseUrl.trim() : '',
    allowedWriteAreas: normalizeAreas(s.allowedWriteAreas),
  };
  if (!knownProvider(value.provider)) return { ok: false, field: 'provider', error: 'Choose a provider.' };
  if (/\s/.test(value.model)) return { ok: false, field: 'model', error: 'A model name has no spaces.' };
  if (value.model.length > 200) return { ok: false, field: 'model', error: 'That model name is too long.' };
  if (value.baseUrl) {
    let u: URL | null = null;
    try {
      u = new URL(value.baseUrl);
    } catch {
      u = null;
    }
    if (!u || (u.protocol !== 'http:' && u.protocol !== 'https:')) {
      return { ok: false, field: 'baseUrl', error: 'The base URL must start with http:// or https://, such as http://127.0.0.1:11434/v1.' };
    }
  }
  if (!effortsFor(value.provider).some((e) => e.id === value.effort)) return { ok: false, field: 'effort', error: 'Choose an effort from the list.' };
  if (!WRITE_POLICIES.some((p) => p.id === value.writePolicy)) return { ok: false, field: 'writePolicy', error: 'Choose how changes happen.' };
  return { ok: true, value };
}

/** Whether a turn can be sent: a model is chosen (a plan without one uses its agent's default). */
export function modelIsSet(s: AssistantSettings | null): boolean {
  return !!s && (isPlan(s.provider) || s.model.trim() !== '');
}

export type KeyState = 'saved' | 'env' | 'none';

/** Where a provider's key comes from. */
export function keyState(p: ProviderInfo): KeyState {
  if (!p.hasKey) return 'none';
  // "settings" (saved here) or "environment" (or the variable's name, such as ANTHROPIC_API_KEY).
  const from = p.keyFrom ?? '';
  return from === 'environment' || /^[A-Z][A-Z0-9_]+$/.test(from) ? 'env' : 'saved';
}

export function keyStateText(p: ProviderInfo): string {
  switch (keyState(p)) {
    case 'saved':
      return 'Key saved';
    case 'env':
      return 'From environment';
    default:
      return 'No key';
  }
}

/** A key to save, or the sentence saying what is wrong with it. */
export function checkKey(key: string): { ok: true; key: string } | { ok: false; error: string } {
  const k = key.trim();
  if (!k) return { ok: false, error: 'Paste the key first.' };
  if (/\s/.test(k)) return { ok: false, error: 'A key has no spaces; paste it again.' };
  if (k.length < 8) return { ok: false, error: 'That is too short to be a key.' };
  return { ok: true, key: k };
}

// ---------- the API ----------

const enc = encodeURIComponent;

/** Null for a route the runtime does not have yet (404), else the answer. */
async function optional<T>(p: Promise<T>): Promise<T | null> {
  try {
    return await p;
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) return null;
    throw e;
  }
}

export const assistantApi = {
  conversations: () =>
    optional(request<{ conversations: ConversationSummary[] | null }>('GET', '/api/assistant/conversations')).then((r) =>
      r === null ? null : (r.conversations ?? []),
    ),
  conversation: (id: string) => request<Conversation>('GET', `/api/assistant/conversations/${enc(id)}`),
  deleteConversation: (id: string) => request<unknown>('DELETE', `/api/assistant/conversations/${enc(id)}`),
  stop: (id: string) => request<unknown>('POST', `/api/assistant/conversations/${enc(id)}/stop`),
  settings: () => optional(request<Partial<AssistantSettings>>('GET', '/api/assistant/settings')).then((r) => (r === null ? null : normalizeSettings(r))),
  saveSettings: (s: AssistantSettings) => request<Partial<AssistantSettings> | null>('PUT', '/api/assistant/settings', s),
  apply: (proposalId: string) => request<{ tool: ToolRow }>('POST', `/api/assistant/proposals/${enc(proposalId)}/apply`),
  discard: (proposalId: string) => request<unknown>('POST', `/api/assistant/proposals/${enc(proposalId)}/discard`),
  applyAll: (conversationId: string) => request<{ tools: ToolRow[] | null }>('POST', `/api/assistant/conversations/${enc(conversationId)}/apply-all`),
  undo: (group: string) => request<{ group?: unknown }>('POST', '/api/assistant/undo', { group }),
  redo: (group: string) => request<{ group?: unknown }>('POST', '/api/assistant/redo', { group }),
  providers: () => optional(request<{ providers: ProviderInfo[] | null }>('GET', '/api/settings/providers')).then((r) => (r === null ? null : (r.providers ?? []))),
  saveKey: (id: string, key: string) => request<unknown>('PUT', `/api/settings/providers/${enc(id)}/key`, { key }),
  removeKey: (id: string) => request<unknown>('DELETE', `/api/settings/providers/${enc(id)}/key`),
};

export interface TurnBody {
  conversationId?: string;
  text: string;
  provider?: string;
  model?: string;
  baseUrl?: string;
  effort?: string;
  /** The open screen's path (routePath), which the assistant's playbook routing counts. */
  path?: string;
}

/**
 * Sends one message and calls onEvent for each event of the turn as it streams. Resolves when the
 * stream ends; a turn refused before it started rejects with an ApiError. A stream that ends without
 * "done" or "error" ends with an error event (the connection was lost), unless signal aborted it.
 */
export async function streamTurn(body: TurnBody, onEvent: (ev: TurnEvent) => void, signal?: AbortSignal, fetchFn: typeof fetch = fetch): Promise<void> {
  let res: Response;
  try {
    res = await fetchFn(apiURL('/api/assistant/turn'), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream' },
      credentials: 'same-origin',
      cache: 'no-store',
      body: JSON.stringify(body),
      signal,
    });
  } catch (e) {
    if (signal?.aborted) return;
    throw new ApiError(0, UNREACHABLE);
  }
  const type = res.headers.get('Content-Type') ?? '';
  if (!res.ok || !type.startsWith('text/event-stream')) {
    const text = await res.text().catch(() => '');
    let data: unknown = null;
    try {
      data = text ? JSON.parse(text) : null;
    } catch {
      data = null;
    }
    if (res.status === 401) notifyUnauthorized();
    throw new ApiError(res.ok ? 502 : res.status, errorSentence(res.ok ? 502 : res.status, data));
  }
  const parser = new SSEParser();
  const decoder = new TextDecoder();
  let ended = false;
  const emit = (frames: SSEFrame[]) => {
    for (const f of frames) {
      const ev = turnEvent(f);
      if (!ev) continue;
      if (ev.type === 'done' || ev.type === 'error') ended = true;
      onEvent(ev);
    }
  };
  const reader = res.body?.getReader();
  if (reader) {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        emit(parser.push(decoder.decode(value, { stream: true })));
      }
      emit(parser.push(decoder.decode()));
    } catch {
      if (signal?.aborted) return;
    }
  }
  if (!ended && !signal?.aborted) {
    onEvent({ type: 'error', error: 'The connection to Ensemble was lost before the answer finished. Ask again.', kind: 'failed' });
  }
}
