// Agent sessions: one conversation with a coding agent across the runs that continue each other
// (GET /api/agent/sessions, derived from the runs on the server).

import type { SESSION_STATUSES } from './catalog.gen';
import { RUN_CREATED, RUN_ENDED, RUN_STARTED, RUN_STATUS } from './events.gen';

/** What a session is doing (sessions.Statuses, generated). */
export type SessionStatus = (typeof SESSION_STATUSES)[number];

export interface TaskRef {
  id: string;
  title: string;
}

export interface Session {
  id: string;
  agent: string;
  model?: string;
  folder: string;
  folderKind: string;
  agentSession?: string;
  firstTask: TaskRef;
  latestTask: TaskRef;
  summary: string;
  status: SessionStatus;
  resumable: boolean;
  lastRun: string;
  runCount: number;
  taskCount: number;
  createdAt: string;
  lastActive: string;
  deletedAt?: string;
  deletedWhy?: string;
}

export interface SessionRun {
  id: string;
  taskId: string;
  title: string;
  status: string;
  agentSession?: string;
  continues?: string;
  summary: string;
  createdAt: string;
  endedAt: string | null;
}

export interface SessionDetail extends Session {
  runs: SessionRun[];
}

export const SESSION_STATUS_LABEL: Record<SessionStatus, string> = {
  working: 'Working',
  waiting: 'Waiting for you',
  queued: 'Queued',
  idle: 'Idle',
};

/** The run events that change what a session shows: a run begun, moved on or ended. */
export const SESSION_RUN_KINDS = [RUN_CREATED, RUN_STATUS, RUN_STARTED, RUN_ENDED] as const;

export function sessionStatusText(s: Pick<Session, 'status' | 'deletedAt' | 'deletedWhy'>): string {
  if (s.deletedAt) return s.deletedWhy === 'retired' ? 'Deleted: its tasks are retired' : 'Deleted';
  return SESSION_STATUS_LABEL[s.status] ?? s.status;
}

/** Where a session works, in words: "a fresh folder of its own", "projects/<name>", or the folder's path. */
export function folderText(s: Pick<Session, 'folder' | 'folderKind'>): string {
  switch (s.folderKind) {
    case 'workspace':
    case 'clone':
      return 'a fresh folder of its own';
    case 'worktree':
      return `a worktree: ${s.folder}`;
    case 'project': {
      // A project's own folder, <workspace>/projects/<name>, named as the spec's session lists do.
      const i = s.folder.lastIndexOf('/projects/');
      return i >= 0 ? s.folder.slice(i + 1) : s.folder;
    }
    default:
      return s.folder;
  }
}

/** "3 runs · 2 tasks". */
export function countsText(s: Pick<Session, 'runCount' | 'taskCount'>): string {
  const n = (v: number, one: string) => `${v} ${one}${v === 1 ? '' : 's'}`;
  return `${n(s.runCount, 'run')} · ${n(s.taskCount, 'task')}`;
}

/** Why Continue is not offered, in a sentence, or '' when it is. */
export function cannotContinue(s: Pick<Session, 'deletedAt' | 'resumable' | 'status' | 'lastRun'>): string {
  if (s.deletedAt) return 'This session was deleted; it is not reopened.';
  if (!s.lastRun || !s.resumable) return 'The agent never got far enough to keep a session to continue.';
  if (s.status !== 'idle') return 'A run of this session is still going; it can be continued once it ends.';
  return '';
}

/** Why Delete is not offered, in a sentence, or '' when it is. */
export function cannotDelete(s: Pick<Session, 'deletedAt' | 'status'>): string {
  if (s.deletedAt) return 'This session is already deleted.';
  if (s.status !== 'idle') return 'A run of this session is still queued or going; stop it before deleting the session.';
  return '';
}
