// Run profiles (GET/POST/PATCH/DELETE /api/agent/profiles): named run settings for an agent, one
// of them starred as the default the Assign dialog starts from. And the pure logic between a
// profile and the Assign dialog's form: filling the form from a profile, what the person changed
// from it, and the assign body that names the profile plus only those changes. The model menus
// are modelmenu.ts's.

import { request } from './api';
import { PROFILE_CHANGED } from './events.gen';
import { assignBody, DEFAULT_FORM, type AssignBody, type AssignForm, type RunSettings } from './runs';

export type ProfileSettings = Partial<
  Pick<
    RunSettings,
    'mode' | 'trusted' | 'sandbox' | 'outside' | 'git' | 'askBeforeCommit' | 'internet' | 'maxMinutes' | 'maxTurns' | 'model' | 'effort' | 'contextTier' | 'fast'
  >
>;

export interface Profile {
  id: string;
  name: string;
  agent: string;
  folder?: string;
  settings: ProfileSettings;
  starred: boolean;
  createdAt: string;
  updatedAt: string;
}

export interface ProfileInput {
  name: string;
  agent: string;
  folder?: string;
  settings: ProfileSettings;
}

const enc = encodeURIComponent;

export const profilesApi = {
  list: () => request<{ profiles: Profile[] | null }>('GET', '/api/agent/profiles').then((r) => sortProfiles(r.profiles ?? [])),
  create: (p: ProfileInput) => request<Profile>('POST', '/api/agent/profiles', p),
  update: (id: string, p: ProfileInput) => request<Profile>('PATCH', `/api/agent/profiles/${enc(id)}`, p),
  remove: (id: string) => request<unknown>('DELETE', `/api/agent/profiles/${enc(id)}`),
  star: (id: string) => request<Profile>('POST', `/api/agent/profiles/${enc(id)}/star`),
  unstar: (id: string) => request<Profile>('DELETE', `/api/agent/profiles/${enc(id)}/star`),
};

/** The live event a profile's change is announced with; its data is {id}. */
export const PROFILE_EVENT = PROFILE_CHANGED;

/** Starred first, then by name (the runtime's order, kept when a list is changed here). */
export function sortProfiles(list: readonly Profile[]): Profile[] {
  return [...list].sort((a, b) => Number(b.starred) - Number(a.starred) || a.name.localeCompare(b.name) || (a.id < b.id ? -1 : 1));
}

/**
 * The profile the Assign dialog starts from, as the runtime picks one (spec 003, pickRunProfile):
 * the starred one, else the first saved; null for none (Quick settings).
 */
export function defaultProfile(list: readonly Profile[]): Profile | null {
  const starred = list.find((p) => p.starred);
  if (starred) return starred;
  return [...list].sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0))[0] ?? null;
}

/** The one-line summary of a profile's settings a list shows: "codex · Run unattended · gpt-5 · 30 min". */
export function profileSummary(p: Profile): string {
  const s = p.settings ?? {};
  const parts = [p.agent];
  if (s.mode) parts.push(MODE_LABEL[s.mode] ?? s.mode);
  if (s.model) parts.push(s.model + (s.effort ? ` (${s.effort})` : ''));
  else if (s.effort) parts.push(`effort ${s.effort}`);
  if (s.contextTier === 'long') parts.push('long context');
  if (s.fast) parts.push('fast');
  if (s.maxMinutes) parts.push(`${s.maxMinutes} min`);
  if (s.maxTurns) parts.push(`${s.maxTurns} turns`);
  return parts.join(' · ');
}

export const MODE_LABEL: Record<RunSettings['mode'], string> = {
  ask: 'Ask before changes',
  review: 'Review after',
  unattended: 'Run unattended',
};

// ---------- form ↔ profile ----------

/** The form a profile fills in: the profile's agent, folder and settings over the plain defaults. */
export function formFromProfile(p: Profile, base: AssignForm = DEFAULT_FORM): AssignForm {
  const s = p.settings ?? {};
  const f: AssignForm = { ...base, agent: p.agent || base.agent, folder: p.folder ?? '' };
  if (s.mode) f.mode = s.mode;
  if (s.git) f.git = s.git;
  if (s.outside) f.outside = s.outside;
  for (const k of ['trusted', 'sandbox', 'internet'] as const) if (typeof s[k] === 'boolean') f[k] = s[k];
  f.maxMinutes = s.maxMinutes ? String(s.maxMinutes) : '';
  f.maxTurns = s.maxTurns ? String(s.maxTurns) : '';
  f.model = s.model ?? '';
  f.effort = s.effort ?? '';
  f.contextTier = s.contextTier === 'long' ? 'long' : '';
  f.fast = s.fast === true;
  if (!f.folder) f.worktree = false;
  return f;
}

/** A limit as the server takes it: a whole number, 0 for none, or the text as typed so the server can say what is wrong. */
function limit(v: string | number | null | undefined): number {
  const s = String(v ?? '').trim();
  if (!s) return 0;
  return /^\d+$/.test(s) ? Number(s) : (s as unknown as number);
}

/**
 * The body of POST/PATCH /api/agent/profiles for a name and a form. Empty model, effort and
 * limits, the standard context window and fast mode off are left out.
 */
export function profileInput(name: string, f: AssignForm): ProfileInput {
  const settings: ProfileSettings = {
    mode: f.mode,
    trusted: f.trusted,
    sandbox: f.sandbox,
    outside: f.outside,
    git: f.git,
    internet: f.internet,
  };
  const mm = limit(f.maxMinutes);
  const mt = limit(f.maxTurns);
  if (mm) settings.maxMinutes = mm;
  if (mt) settings.maxTurns = mt;
  const model = f.model.trim();
  const effort = f.effort.trim();
  if (model) settings.model = model;
  if (effort) settings.effort = effort;
  if (f.contextTier === 'long') settings.contextTier = 'long';
  if (f.fast) settings.fast = true;
  const out: ProfileInput = { name: name.trim(), agent: f.agent.trim(), settings };
  const folder = f.folder.trim();
  if (folder) out.folder = folder;
  return out;
}

/** The settings fields of the form, in the order they are compared and sent. */
const SETTING_KEYS = ['mode', 'trusted', 'sandbox', 'internet', 'git', 'outside', 'maxMinutes', 'maxTurns', 'model', 'effort', 'contextTier', 'fast'] as const;
type SettingKey = (typeof SETTING_KEYS)[number];

function norm(k: keyof AssignForm, v: unknown): unknown {
  if (k === 'maxMinutes' || k === 'maxTurns') return limit(v as string);
  if (typeof v === 'string') return v.trim();
  return v;
}

/** The form fields the person changed from what the profile filled in (agent, folder and settings). */
export function changedFields(from: AssignForm, f: AssignForm): (keyof AssignForm)[] {
  const keys: (keyof AssignForm)[] = ['agent', 'folder', ...SETTING_KEYS];
  return keys.filter((k) => norm(k, from[k]) !== norm(k, f[k]));
}

/**
 * The body of POST /api/agent/assign. Without a profile: every field (assignBody). With one: the
 * profile's id plus only the fields the person changed from it, so the profile supplies the rest.
 * A cleared model, effort or context window is sent empty, fast mode turned off as false and a
 * cleared limit as 0: the agent's own default, no limit.
 */
export function assignBodyFor(target: { taskId: string }, f: AssignForm, profile: Profile | null): AssignBody {
  if (!profile) return assignBody(target, f);
  const from = formFromProfile(profile);
  const changed = changedFields(from, f);
  const body: AssignBody = { ...target, profile: profile.id, settings: {} };
  for (const k of changed) {
    if (k === 'agent') body.agent = f.agent.trim();
    else if (k === 'folder') body.folder = f.folder.trim();
    else body.settings[k] = norm(k, f[k as SettingKey]) as string | number | boolean;
  }
  if (f.worktree && f.folder.trim()) body.worktree = true;
  return body;
}
