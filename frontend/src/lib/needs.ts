// Needs me: the open decisions runs have for the person, kept in step with the live stream.

import { NEEDS_CREATED, NEEDS_KINDS } from './events.gen';
import type { LiveEvent } from './types';

export interface Touches {
  programs?: string[];
  reads?: string[];
  writes?: string[];
  hosts?: string[];
  folders?: string[];
  kinds?: string[];
}

export interface Decision {
  id: string;
  kind: 'permission' | 'question';
  source: { runId?: string; title: string };
  question?: string;
  call?: string;
  touches?: Touches;
  reason?: string;
  options: string[];
  recommended: number;
  /** One line saying why the recommended option is the careful choice. */
  why?: string;
  freeText: boolean;
  /** A run's sign-in or human check in one of its tabs, which the person can do from here. */
  signIn?: { tab: string; site: string; purpose: string };
  created: string;
  status: 'open' | 'answered' | 'withdrawn' | 'expired';
  answer?: { option: number; text: string };
  answeredBy?: string;
  answeredAt?: string;
  closedAt?: string;
}

/** A decision on the list; a settled one stays a moment with a note saying what happened. */
export interface NeedItem {
  d: Decision;
  /** Set once it settled elsewhere: the sentence shown until it goes. */
  note?: string;
}

export const NEED_EVENT_KINDS = NEEDS_KINDS;

function isDecision(v: unknown): v is Decision {
  return typeof v === 'object' && v !== null && typeof (v as Decision).id === 'string' && typeof (v as Decision).kind === 'string';
}

/** Newest first (by created, then id). */
export function sortNeeds(items: readonly NeedItem[]): NeedItem[] {
  return [...items].sort((a, b) =>
    a.d.created < b.d.created ? 1 : a.d.created > b.d.created ? -1 : a.d.id < b.d.id ? 1 : a.d.id > b.d.id ? -1 : 0,
  );
}

export function fromList(list: readonly Decision[]): NeedItem[] {
  return sortNeeds(list.filter((d) => d.status === 'open').map((d) => ({ d })));
}

/** The sentence for a decision that settled somewhere other than this window. */
export function settledNote(d: Decision): string {
  switch (d.status) {
    case 'answered': {
      const choice = d.answer ? (d.answer.option >= 0 ? d.options[d.answer.option] : d.answer.text) : '';
      const by =
        d.answeredBy === 'command line'
          ? 'Answered from the command line'
          : d.answeredBy === 'run unattended'
            ? 'Answered by Run unattended'
            : d.answeredBy === 'phone'
              ? 'Answered on your phone'
              : 'Answered in another window';
      return choice ? `${by}: ${choice}` : `${by}.`;
    }
    case 'withdrawn':
      return 'Withdrawn: its run ended.';
    case 'expired':
      return 'Expired: nobody waits for the answer any more.';
    default:
      return '';
  }
}

export interface NeedsUpdate {
  items: NeedItem[];
  /** A decision this event settled while it was on the list (not one this window answered). */
  settled?: string;
}

/**
 * Applies a live event. created adds an open decision (once); answered, withdrawn and expired mark
 * it settled with a note (or drop it at once when `mine` has its id: this window answered it).
 * Events at or below `seq` (what the loaded list already reflects) are skipped.
 */
export function applyNeedEvent(
  items: readonly NeedItem[],
  ev: LiveEvent,
  opts: { mine?: ReadonlySet<string>; seq?: number } = {},
): NeedsUpdate {
  const same = { items: items as NeedItem[] };
  if (!(NEED_EVENT_KINDS as readonly string[]).includes(ev.kind)) return same;
  if (opts.seq !== undefined && ev.seq !== undefined && ev.seq <= opts.seq) return same;
  if (!isDecision(ev.data)) return same;
  const d = ev.data;
  const i = items.findIndex((x) => x.d.id === d.id);
  if (ev.kind === NEEDS_CREATED) {
    if (d.status !== 'open' || i >= 0) return same;
    return { items: sortNeeds([...items, { d }]) };
  }
  if (i < 0 || items[i].note) return same;
  if (opts.mine?.has(d.id)) return { items: items.filter((x) => x.d.id !== d.id) };
  const next = items.slice();
  next[i] = { d, note: settledNote(d) };
  return { items: next, settled: d.id };
}

export function dropNeed(items: readonly NeedItem[], id: string): NeedItem[] {
  return items.filter((x) => x.d.id !== id);
}

/** How many decisions wait for an answer. */
export function openCount(items: readonly NeedItem[]): number {
  return items.filter((x) => !x.note).length;
}

/** "(2) Ensemble", or the plain title when nothing waits. */
export function documentTitle(count: number, base = 'Ensemble'): string {
  return count > 0 ? `(${count}) ${base}` : base;
}

/** What a decision asks, in a line. */
export function needTitle(d: Decision): string {
  return d.kind === 'permission' ? (d.call ?? 'A tool call') : (d.question ?? 'A question');
}

/** A permission's "what it would touch", as labelled lists, empty ones left out. */
export function touchesList(t: Touches | undefined): { label: string; items: string[] }[] {
  if (!t) return [];
  const rows: [string, string[] | undefined][] = [
    ['Runs', t.programs],
    ['Reads', t.reads],
    ['Writes', t.writes],
    ['Reaches', t.hosts],
    ['Opens for changes', t.folders],
    ['Keeps allowing', t.kinds],
  ];
  return rows.filter(([, v]) => v && v.length).map(([label, v]) => ({ label, items: v as string[] }));
}

/** "just now", "5 min ago", "3 h ago", "2 d ago". */
export function ago(iso: string, now: number = Date.now()): string {
  const t = Date.parse(iso);
  if (!Number.isFinite(t)) return '';
  const s = Math.max(0, Math.round((now - t) / 1000));
  if (s < 45) return 'just now';
  const m = Math.round(s / 60);
  if (m < 60) return `${m} min ago`;
  const h = Math.round(m / 60);
  if (h < 24) return `${h} h ago`;
  return `${Math.round(h / 24)} d ago`;
}
