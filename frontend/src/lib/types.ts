// Shapes of the runtime's JSON API, as the board uses them.

import type { TASK_PRIORITIES, TASK_STATUSES } from './catalog.gen';

/** A task's status (records.Statuses, generated). */
export type Status = (typeof TASK_STATUSES)[number];

/** A task's priority (records.Priorities, generated). */
export type Priority = (typeof TASK_PRIORITIES)[number];

export interface Task {
  id: string;
  spaceId: string;
  projectId: string | null;
  title: string;
  status: Status;
  priority: Priority;
  due: string | null;
  labels: string[];
  ownerId: string | null;
  /** The node or the crew the task is with (spec 002 §6.6); then ownerId is null. */
  assigneeNodeId?: string | null;
  assigneeRoomId?: string | null;
  /** Names that node or crew, in the API's answers (not in live events). */
  nodeAssignee?: { kind: 'node' | 'crew'; id: string; name: string; handle?: string } | null;
  people: string[];
  repoId: string | null;
  page: string;
  position: number;
  createdAt: string;
  updatedAt: string;
  deletedAt: string | null;
}

/** The fields a PATCH or POST may carry. */
export type TaskFields = Partial<
  Pick<
    Task,
    | 'title'
    | 'status'
    | 'priority'
    | 'due'
    | 'labels'
    | 'projectId'
    | 'ownerId'
    | 'assigneeNodeId'
    | 'assigneeRoomId'
    | 'people'
    | 'repoId'
    | 'page'
  >
>;

export type Moves = Partial<Record<Status, Status[]>>;

export interface Project {
  id: string;
  name: string;
  summary?: string;
  status?: string;
}

export interface Person {
  id: string;
  name: string;
  role?: string;
}

/** One message of the live stream: its kind (the SSE event name) and its parsed data. */
export interface LiveEvent {
  kind: string;
  data: unknown;
  /** The event's sequence number (the SSE id), when the stream gave one. */
  seq?: number;
}
