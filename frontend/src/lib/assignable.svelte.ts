// The nodes and crews a task may be given to (GET /api/node/assignable, spec 002 §6.6), read once
// and again when a node or a room changes, and what a task card says of a node owner.

import { request } from './api';
import type { Avatar } from './node';
import type { Task } from './types';

export interface AssignableNode {
  id: string;
  slug: string;
  name: string;
  role: string;
  avatar?: Avatar;
}

export interface AssignableCrew {
  roomId: string;
  title: string;
  lead: { id: string; slug: string; name: string } | null;
  members: number;
}

export interface Assignable {
  nodes: AssignableNode[];
  crews: AssignableCrew[];
}

export const assignable = $state<Assignable>({ nodes: [], crews: [] });

/** Reads the list again; without Ensemble Node (404) it stays empty. */
export async function loadAssignable(): Promise<void> {
  try {
    const a = await request<Assignable>('GET', '/api/node/assignable');
    assignable.nodes = a.nodes ?? [];
    assignable.crews = a.crews ?? [];
  } catch {
    assignable.nodes = [];
    assignable.crews = [];
  }
}

/** A task's node owner as a card shows it: a node by its name and face, a crew as "Crew <title>". */
export interface NodeOwner {
  kind: 'node' | 'crew';
  label: string;
  avatar?: Avatar;
}

export function nodeOwnerOf(task: Task, a: Assignable): NodeOwner | null {
  if (task.assigneeNodeId) {
    const n = a.nodes.find((x) => x.id === task.assigneeNodeId);
    const name = n?.name ?? task.nodeAssignee?.name ?? 'A node';
    return { kind: 'node', label: name, avatar: n?.avatar };
  }
  if (task.assigneeRoomId) {
    const c = a.crews.find((x) => x.roomId === task.assigneeRoomId);
    return { kind: 'crew', label: `Crew ${c?.title ?? task.nodeAssignee?.name ?? ''}`.trim() };
  }
  return null;
}

/** The Owner field's value for a task: a person's id, node:<id>, crew:<roomId>, or '' for none. */
export function ownerValue(task: Pick<Task, 'ownerId' | 'assigneeNodeId' | 'assigneeRoomId'>): string {
  if (task.assigneeNodeId) return `node:${task.assigneeNodeId}`;
  if (task.assigneeRoomId) return `crew:${task.assigneeRoomId}`;
  return task.ownerId ?? '';
}

/** The task's fields an Owner field's value sets: exactly one of a person, a node or a crew. */
export function ownerFields(v: string): Pick<Task, 'ownerId' | 'assigneeNodeId' | 'assigneeRoomId'> {
  if (v.startsWith('node:')) return { ownerId: null, assigneeNodeId: v.slice(5), assigneeRoomId: null };
  if (v.startsWith('crew:')) return { ownerId: null, assigneeNodeId: null, assigneeRoomId: v.slice(5) };
  return { ownerId: v || null, assigneeNodeId: null, assigneeRoomId: null };
}
