// Settings: the coding agents this computer has (GET /api/agents), the context bridge's editor
// keys (/api/keys) and paired phones (/api/pair/devices). Shapes from runtime/api/agents.go,
// runtime/bridge/keys/keys.go and runtime/api/pair.go.

import { ApiError, request } from './api';
import { PHONE_ROTATED, PHONE_TAKEN } from './events.gen';
import { forgetSession } from './session';

export type SignedIn = 'yes' | 'no' | 'unknown';

export interface Agent {
  name: string;
  title: string;
  installed: boolean;
  path?: string;
  version?: string;
  signedIn: SignedIn;
  login?: string;
  problem?: string;
  /** The models the agent reports on this computer: names, or (when known) with their thinking levels. */
  models?: ReportedModel[] | null;
  /** What the agent says of each model, where it says more than names (spec 003 §3.2). */
  catalog?: ModelInfo[] | null;
  /** Whether a run with the sandbox on can start here, and what confines it (engines.SandboxCheck). */
  sandbox?: SandboxCheck | null;
}

/** Whether an agent's runs can be sandboxed on this computer. */
export interface SandboxCheck {
  ok: boolean;
  /** Whose sandbox: the agent's own name, or "ensemble" for Ensemble's around the whole agent. */
  by?: string;
  whole?: boolean;
  /** Why not, with what to install or to turn off. */
  problem?: string;
}

/** What confines an agent's runs, in a line for Settings → Agents ("" when not installed). */
export function sandboxText(a: Agent): string {
  const c = a.sandbox;
  if (!a.installed || !c) return '';
  if (!c.ok) return c.problem ?? 'It cannot be sandboxed here.';
  return c.whole ? "Sandboxed by Ensemble's OS sandbox, around the whole agent." : "Sandboxed by its own OS sandbox, with this run's folders.";
}

/** A model an agent reports: its id, and what it takes when known (engines.ModelInfo). */
export interface ModelInfo {
  id: string;
  name?: string;
  /** Who makes it: Anthropic, OpenAI. */
  vendor?: string;
  description?: string;
  /** The model the agent runs when none is named. */
  default?: boolean;
  /** Its thinking levels, lowest first. */
  efforts?: string[];
  defaultEffort?: string;
  /** Its standard context window in tokens; longContext its long one when it has two. */
  context?: number;
  longContext?: number;
  /** It has a fast mode. */
  fast?: boolean;
}

/** The runtime's detection gives model names; a richer answer may give objects. Both are read. */
export type ReportedModel = string | ModelInfo;

export interface EditorKey {
  id: string;
  name: string;
  hint: string;
  canWrite: boolean;
  canUseApps: boolean;
  createdAt: string;
  lastUsedAt?: string | null;
  revokedAt?: string | null;
}

export interface NewKey {
  key: EditorKey;
  secret: string;
  note?: string;
}

export interface Phone {
  id: string;
  name: string;
  createdAt: string;
  lastSeenAt?: string | null;
}

/** A one-time link that pairs a phone (POST /api/pair/links). */
export interface PairLink {
  url: string;
  expiresAt: string;
}

/** "4 min" or "40 s" left until iso, or '' once it has passed. */
export function timeLeft(iso: string, now: Date = new Date()): string {
  const s = Math.floor((Date.parse(iso) - now.getTime()) / 1000);
  if (!Number.isFinite(s) || s <= 0) return '';
  return s >= 60 ? `${Math.ceil(s / 60)} min` : `${s} s`;
}

/** The tunnel to the relay (PhoneStatus in runtime/api/pair.go). */
export interface PhoneStatus {
  host: string;
  up: boolean;
  /** Times another copy of Ensemble with this computer's phone key took its address. */
  taken?: number;
  takenAt?: string;
  takenFrom?: string;
  error?: string;
}

/** Paired phones, or `setup` set when phone access is not set up (then there are none). */
export interface Phones {
  devices: Phone[];
  setup: boolean;
  /** The phone address and its tunnel; absent while phone access is off. */
  host?: string;
  status?: PhoneStatus;
  /** What to tell the person when the address was taken; '' when it was not. */
  taken?: string;
}

/** Events of phone access (app/phones.go): its address taken by another copy of Ensemble with
 * this computer's phone key (data: {status, sentence}), and a new address. */
export const PHONE_TAKEN_EVENT = PHONE_TAKEN;
export const PHONE_ROTATED_EVENT = PHONE_ROTATED;

/** A new phone address (POST /api/pair/rotate). */
export interface Rotated {
  host: string;
  url: string;
  signedOut: number;
}

export const PHONES_SETUP =
  'Phone access is not set up. Run `ensemble pair setup RELAY` on this computer (RELAY is your relay’s address), start Ensemble again, then `ensemble pair` shows a code to scan.';

export const MCP_HINT = 'Put it in your editor’s environment as ENSEMBLE_KEY, then run `ensemble mcp setup <client>` (for example `ensemble mcp setup claude`).';

/** What the agent's sign-in state reads as. */
export function signInText(a: Agent): string {
  if (!a.installed) return 'Not installed';
  if (a.signedIn === 'yes') return 'Signed in';
  if (a.signedIn === 'no') return 'Signed out';
  return 'Checks on first use';
}

/** Whether to offer "Sign in": installed, not known to be signed in, and it has a sign-in command. */
export function canSignIn(a: Agent): boolean {
  return a.installed && a.signedIn !== 'yes' && !!a.login;
}

/** What a key may do, in words. */
export function grantsText(k: Pick<EditorKey, 'canWrite' | 'canUseApps'>): string {
  const g = ['read'];
  if (k.canWrite) g.push('make changes');
  if (k.canUseApps) g.push('use connected apps');
  return g.length === 1 ? 'May read' : `May ${g.slice(0, -1).join(', ')} and ${g.at(-1)}`;
}

/** Keys still in force, newest first. */
export function liveKeys(keys: readonly EditorKey[]): EditorKey[] {
  return keys.filter((k) => !k.revokedAt).sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0));
}

/** A time as "just now", "5 min ago", "3 h ago", "2 days ago", else the date; "never" for none. */
export function ago(iso: string | null | undefined, now: Date = new Date()): string {
  if (!iso) return 'never';
  const t = Date.parse(iso);
  if (!Number.isFinite(t) || t <= 0) return 'never';
  const s = Math.max(0, (now.getTime() - t) / 1000);
  if (s < 60) return 'just now';
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  const d = Math.floor(s / 86400);
  if (d < 14) return d === 1 ? 'yesterday' : `${d} days ago`;
  return new Date(t).toISOString().slice(0, 10);
}

/** The phones answer: a 404 (no such route) or an empty relay means phone access is not set up. */
export function phonesFrom(body: PhonesBody | null): Phones {
  if (!body || !body.relay) return { devices: body?.devices ?? [], setup: true };
  return { devices: body.devices ?? [], setup: false, host: body.relay, status: body.access?.status, taken: body.access?.taken ?? '' };
}

/** GET /api/pair/devices. */
export interface PhonesBody {
  devices?: Phone[] | null;
  relay?: string;
  access?: { status: PhoneStatus; taken: string };
}

/** What the tunnel is doing, in words. */
export function tunnelText(st: PhoneStatus | undefined): string {
  if (!st) return '';
  if (st.up) return 'Connected to the relay';
  return st.error ? `Not connected to the relay: ${st.error}` : 'Connecting to the relay…';
}

const enc = encodeURIComponent;

export const settingsApi = {
  agents: (refresh = false) =>
    request<{ agents: Agent[] | null }>('GET', refresh ? '/api/agents?refresh=1' : '/api/agents').then((r) => r.agents ?? []),
  keys: () => request<{ keys: EditorKey[] | null }>('GET', '/api/keys').then((r) => r.keys ?? []),
  createKey: (name: string, canWrite: boolean, canUseApps: boolean) =>
    request<NewKey>('POST', '/api/keys', { name, canWrite, canUseApps }),
  revokeKey: (id: string) => request<{ key: EditorKey }>('DELETE', `/api/keys/${enc(id)}`),
  phones: async (): Promise<Phones> => {
    try {
      return phonesFrom(await request<PhonesBody>('GET', '/api/pair/devices'));
    } catch (e) {
      if (e instanceof ApiError && e.status === 404) return { devices: [], setup: true };
      throw e;
    }
  },
  revokePhone: (id: string) => request<unknown>('DELETE', `/api/pair/devices/${enc(id)}`),
  pairLink: () => request<PairLink>('POST', '/api/pair/links'),
  /** Ends this browser's session; the page then shows that it is signed out. Answers the
   * runtime's sentence on how to sign in again ('' from a runtime that gives none). */
  signOut: async (): Promise<string> => {
    const r = await request<{ signedOut: boolean; signIn?: string }>('POST', '/api/signout');
    forgetSession();
    return r.signIn ?? '';
  },
  rotatePhones: () => request<Rotated>('POST', '/api/pair/rotate'),
};

/** A sentence split at its `backticks`: the odd parts are code. */
export function codeParts(s: string): { text: string; code: boolean }[] {
  return s
    .split('`')
    .map((text, i) => ({ text, code: i % 2 === 1 }))
    .filter((p) => p.text !== '');
}

/** The agent's problem sentence without the "agent not installed:" its state already says. */
export function problemText(a: Agent): string {
  const p = (a.problem ?? '').trim().replace(/^agent not installed:\s*/i, '');
  return p ? p[0].toUpperCase() + p.slice(1) + (/[.!?]$/.test(p) ? '' : '.') : '';
}

/** Installed agents first, each group in the runtime's order. */
export function agentOrder(list: readonly Agent[]): Agent[] {
  return [...list.filter((a) => a.installed), ...list.filter((a) => !a.installed)];
}

/** The agents that are not installed, as one line: "Not installed: Cursor, Gemini CLI and Qwen Code." */
export function notInstalledLine(list: readonly Agent[]): string {
  const names = list.filter((a) => !a.installed).map((a) => a.title || a.name);
  if (!names.length) return '';
  const words = names.length === 1 ? names[0] : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
  return `Not installed: ${words}.`;
}

/** The sections of Settings, in page order: their address (#/settings/<id>) and name. */
export const SETTINGS_SECTIONS = [
  ['agents', 'Agents'],
  ['profiles', 'Run profiles'],
  ['assistant', 'Assistant'],
  ['providers', 'Model providers'],
  ['secrets', 'Secrets'],
  ['keys', 'Editor keys'],
  ['phones', 'Phones'],
] as const;
