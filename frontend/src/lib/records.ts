// The Hub's records besides tasks (projects, pages, people, repositories): what each screen lists,
// the fields its form edits, and how a live event changes a list. Every kind has the same routes
// (GET /api/<path>, POST, PATCH and DELETE /api/<path>/{id}) and the same events
// (<event>.created, .updated, .trashed, .restored, .purged), whose data is the record.

import type { RecordScreen } from './route';
import { PROJECT_STATUSES as PROJECT_STATUS_IDS } from './catalog.gen';
import { FAMILIES } from './events.gen';
import type { LiveEvent } from './types';

export interface RecordBase {
  id: string;
  createdAt?: string;
  updatedAt?: string;
  deletedAt?: string | null;
}

export interface ProjectRecord extends RecordBase {
  name: string;
  summary: string;
  status: string;
  notes: string;
}

export interface PageRecord extends RecordBase {
  title: string;
  body: string;
  parentId: string | null;
}

export interface PersonRecord extends RecordBase {
  name: string;
  email: string;
  role: string;
  team: string;
  relationship: string;
  notes: string;
}

export interface RepoRecord extends RecordBase {
  name: string;
  url: string;
  path: string;
  defaultBranch: string;
}

export type AnyRecord = RecordBase & Record<string, unknown>;

export type FieldKind = 'text' | 'email' | 'url' | 'textarea' | 'markdown' | 'select' | 'parent';

export interface Field {
  key: string;
  label: string;
  kind: FieldKind;
  max: number;
  required?: boolean;
  placeholder?: string;
  /** A select's choices: [value, label]. */
  options?: readonly (readonly [string, string])[];
}

export interface Kind {
  screen: RecordScreen;
  /** The API's collection: /api/<path>, and the list answer's key. */
  path: string;
  /** The events' prefix: <event>.created … */
  event: keyof typeof FAMILIES;
  one: string; // "project"
  many: string; // "Projects"
  /** The field that names a record (the list's title and the toast's). */
  title: string;
  fields: readonly Field[];
  /** The empty screen: what these records are and what to do. */
  empty: string;
  /** A second line under the title in the list, from the record. */
  sub: (r: AnyRecord) => string;
}

const PROJECT_STATUS_LABEL: Record<(typeof PROJECT_STATUS_IDS)[number], string> = {
  active: 'Active',
  paused: 'Paused',
  done: 'Done',
  archived: 'Archived',
};

/** A project's states (records.ProjectStatuses, generated) with their words. */
export const PROJECT_STATUSES = PROJECT_STATUS_IDS.map((s) => [s, PROJECT_STATUS_LABEL[s]] as const);

export const KINDS: Record<RecordScreen, Kind> = {
  projects: {
    screen: 'projects',
    path: 'projects',
    event: 'project',
    one: 'project',
    many: 'Projects',
    title: 'name',
    fields: [
      { key: 'name', label: 'Name', kind: 'text', max: 200, required: true, placeholder: 'e.g. Greenhouse automation' },
      { key: 'status', label: 'Status', kind: 'select', max: 20, options: PROJECT_STATUSES },
      { key: 'summary', label: 'Summary', kind: 'textarea', max: 2000, placeholder: 'The outcome, in a sentence or two' },
      { key: 'notes', label: 'Notes', kind: 'markdown', max: 500_000 },
    ],
    empty: 'A project groups tasks toward one outcome. Press New project to start one; then file tasks under it from a task’s editor.',
    sub: (r) => [statusLabel(String(r.status ?? '')), String(r.summary ?? '')].filter(Boolean).join(' · '),
  },
  pages: {
    screen: 'pages',
    path: 'pages',
    event: 'page',
    one: 'page',
    many: 'Pages',
    title: 'title',
    fields: [
      { key: 'title', label: 'Title', kind: 'text', max: 300, required: true, placeholder: 'e.g. How we release' },
      { key: 'parentId', label: 'Inside', kind: 'parent', max: 0 },
      { key: 'body', label: 'Text', kind: 'markdown', max: 500_000, placeholder: 'Write in Markdown…' },
    ],
    empty: 'Pages keep what you know in Markdown: notes, plans, how-tos. Press New page to write one; pages can nest inside each other.',
    sub: (r) => firstLine(String(r.body ?? '')),
  },
  people: {
    screen: 'people',
    path: 'people',
    event: 'person',
    one: 'person',
    many: 'People',
    title: 'name',
    fields: [
      { key: 'name', label: 'Name', kind: 'text', max: 200, required: true, placeholder: 'e.g. Mira Okafor' },
      { key: 'email', label: 'Email', kind: 'email', max: 320 },
      { key: 'role', label: 'Role', kind: 'text', max: 200, placeholder: 'e.g. Designer' },
      { key: 'team', label: 'Team', kind: 'text', max: 200 },
      { key: 'relationship', label: 'Relationship', kind: 'text', max: 200, placeholder: 'e.g. client, teammate' },
      { key: 'notes', label: 'Notes', kind: 'markdown', max: 500_000 },
    ],
    empty: 'People are who you work with: tasks can name an owner and the people involved. Press New person to add someone.',
    sub: (r) => [r.role, r.team, r.email].map((v) => String(v ?? '')).filter(Boolean).join(' · '),
  },
  repos: {
    screen: 'repos',
    path: 'repos',
    event: 'repo',
    one: 'repository',
    many: 'Repositories',
    title: 'name',
    fields: [
      { key: 'name', label: 'Name', kind: 'text', max: 200, required: true, placeholder: 'e.g. greenhouse-firmware' },
      { key: 'url', label: 'Remote URL', kind: 'url', max: 2000, placeholder: 'https://github.com/you/repo' },
      { key: 'path', label: 'Checkout on this computer', kind: 'text', max: 4096, placeholder: '/home/you/src/repo' },
      { key: 'defaultBranch', label: 'Default branch', kind: 'text', max: 255, placeholder: 'main' },
    ],
    empty: 'Repositories are the code your agents work in: a remote URL, a checkout on this computer, or both. Press New repository to add one.',
    sub: (r) => String(r.path || r.url || ''),
  },
};

/** The record kinds by their event prefix ("project" → projects). */
export const KIND_BY_EVENT: Record<string, RecordScreen> = Object.fromEntries(
  Object.values(KINDS).map((k) => [k.event, k.screen]),
);

/** Every event kind the record screens follow. */
export const RECORD_EVENT_KINDS: string[] = Object.values(KINDS).flatMap((k) => FAMILIES[k.event]);

export function statusLabel(s: string): string {
  return PROJECT_STATUSES.find(([v]) => v === s)?.[1] ?? s;
}

/** The first line of a Markdown body with its heading marks, list marks and emphasis taken off. */
export function firstLine(body: string): string {
  for (const raw of body.split('\n')) {
    const l = raw
      .replace(/^\s*(#{1,6}\s+|[-*+]\s+|\d+\.\s+|>\s*)/, '')
      .replace(/[*_`]/g, '')
      .trim();
    if (l) return l.length > 140 ? l.slice(0, 139) + '…' : l;
  }
  return '';
}

/** The name a record goes by: its title field, or a word for one without. */
export function recordTitle(kind: Kind, r: AnyRecord | null | undefined): string {
  const t = r ? String(r[kind.title] ?? '').trim() : '';
  return t || `this ${kind.one}`;
}

function isRecord(v: unknown): v is AnyRecord {
  return typeof v === 'object' && v !== null && typeof (v as RecordBase).id === 'string';
}

/** Sorted by the title field, case-insensitively, then id: the order the API lists them in. */
export function sortRecords<T extends AnyRecord>(kind: Kind, list: readonly T[]): T[] {
  return [...list].sort((a, b) => {
    const c = String(a[kind.title] ?? '').localeCompare(String(b[kind.title] ?? ''), undefined, { sensitivity: 'base' });
    return c || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
  });
}

/**
 * Applies one live event to a kind's list and returns the new list (the input is not changed):
 * created, updated and restored put the record in (in order), trashed and purged take it out.
 * Events of other kinds and malformed data return the same list.
 */
export function applyRecordEvent<T extends AnyRecord>(kind: Kind, list: readonly T[], ev: LiveEvent): readonly T[] {
  const [prefix, verb] = ev.kind.split('.');
  if (prefix !== kind.event || !verb || !isRecord(ev.data)) return list;
  const rec = ev.data as T;
  const i = list.findIndex((r) => r.id === rec.id);
  if (verb === 'purged' || verb === 'trashed' || rec.deletedAt) {
    return i < 0 ? list : list.filter((r) => r.id !== rec.id);
  }
  if (!['created', 'updated', 'restored'].includes(verb)) return list;
  const next = i < 0 ? [...list, rec] : list.map((r) => (r.id === rec.id ? rec : r));
  return sortRecords(kind, next);
}

/** Puts a record the API returned into the list (or takes it out if it is trashed). */
export function upsertRecord<T extends AnyRecord>(kind: Kind, list: readonly T[], rec: T): readonly T[] {
  return applyRecordEvent(kind, list, { kind: `${kind.event}.updated`, data: rec });
}

/** The form's values for a record: every field as a string ('' for none). */
export function formOf(kind: Kind, r: AnyRecord | null): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of kind.fields) {
    const v = r?.[f.key];
    out[f.key] = v === null || v === undefined ? (f.kind === 'select' && f.options ? f.options[0][0] : '') : String(v);
  }
  return out;
}

/**
 * The body of a POST (no record yet) or a PATCH: only the fields that differ from the record,
 * text trimmed of the ends a person does not mean (not a Markdown body's), parentId null for none.
 */
export function changes(kind: Kind, r: AnyRecord | null, form: Record<string, string>): Record<string, string | null> {
  const out: Record<string, string | null> = {};
  for (const f of kind.fields) {
    const raw = form[f.key] ?? '';
    const v = f.kind === 'parent' ? raw || null : f.kind === 'markdown' || f.kind === 'textarea' ? raw : raw.trim();
    if (r === null) {
      if (v !== null && v !== '') out[f.key] = v;
      continue;
    }
    const had = r[f.key] ?? (f.kind === 'parent' ? null : '');
    if (v !== had) out[f.key] = v;
  }
  return out;
}

/** The first problem with a form, in a sentence, or ''. */
export function formProblem(kind: Kind, form: Record<string, string>): string {
  for (const f of kind.fields) {
    const v = (form[f.key] ?? '').trim();
    if (f.required && !v) return `A ${kind.one} needs a ${f.label.toLowerCase()}.`;
    if (f.max && [...(form[f.key] ?? '')].length > f.max) return `The ${f.label.toLowerCase()} is longer than ${f.max.toLocaleString('en')} characters.`;
    if (f.kind === 'email' && v && !/^[^\s@]+@[^\s@]+$/.test(v)) return `“${v}” is not an email address.`;
  }
  return '';
}

/**
 * Pages in tree order (each after its parent, siblings by title) with their depth. A page whose
 * parent is not in the list shows at the top.
 */
export function pageTree(pages: readonly PageRecord[]): { page: PageRecord; depth: number }[] {
  const ids = new Set(pages.map((p) => p.id));
  const children = new Map<string, PageRecord[]>();
  for (const p of sortRecords(KINDS.pages, pages as unknown as AnyRecord[]) as unknown as PageRecord[]) {
    const parent = p.parentId && ids.has(p.parentId) && p.parentId !== p.id ? p.parentId : '';
    children.set(parent, [...(children.get(parent) ?? []), p]);
  }
  const out: { page: PageRecord; depth: number }[] = [];
  const seen = new Set<string>();
  const walk = (parent: string, depth: number) => {
    for (const p of children.get(parent) ?? []) {
      if (seen.has(p.id)) continue;
      seen.add(p.id);
      out.push({ page: p, depth });
      walk(p.id, depth + 1);
    }
  };
  walk('', 0);
  // A cycle the server would refuse, kept visible rather than lost.
  for (const p of pages) if (!seen.has(p.id)) out.push({ page: p, depth: 0 });
  return out;
}

/** The pages a page may go inside: every page but itself and the pages inside it. */
export function parentChoices(pages: readonly PageRecord[], self: string | null): PageRecord[] {
  if (!self) return [...pages];
  const inside = new Set([self]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const p of pages) {
      if (p.parentId && inside.has(p.parentId) && !inside.has(p.id)) {
        inside.add(p.id);
        grew = true;
      }
    }
  }
  return pages.filter((p) => !inside.has(p.id));
}

/** Whether a record matches a search: any of its text fields contains the words, in any case. */
export function matches(kind: Kind, r: AnyRecord, q: string): boolean {
  const words = q.toLowerCase().split(/\s+/).filter(Boolean);
  if (!words.length) return true;
  const text = kind.fields
    .filter((f) => f.kind !== 'parent')
    .map((f) => String(r[f.key] ?? ''))
    .join('\n')
    .toLowerCase();
  return words.every((w) => text.includes(w));
}
