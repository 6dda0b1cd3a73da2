import { describe, expect, it } from 'vitest';
import { nodeOwnerOf, ownerFields, ownerValue, type Assignable } from './assignable.svelte';
import type { Task } from './types';

const a: Assignable = {
  nodes: [{ id: 'nod_a', slug: 'ada', name: 'Ada', role: 'researcher', avatar: { shape: 'hex', color: '#d5604f', eyes: 'dots' } }],
  crews: [{ roomId: 'room_c', title: 'Launch', lead: null, members: 2 }],
};
const task = (f: Partial<Task>) => ({ id: 't', ownerId: null, assigneeNodeId: null, assigneeRoomId: null, ...f }) as Task;

describe('a task given to a node or a crew', () => {
  it('shows the node by name and face, a crew as Crew <title>, nobody as nothing', () => {
    expect(nodeOwnerOf(task({ assigneeNodeId: 'nod_a' }), a)).toEqual({ kind: 'node', label: 'Ada', avatar: a.nodes[0].avatar });
    expect(nodeOwnerOf(task({ assigneeRoomId: 'room_c' }), a)).toEqual({ kind: 'crew', label: 'Crew Launch' });
    expect(nodeOwnerOf(task({ assigneeNodeId: 'nod_gone', nodeAssignee: { kind: 'node', id: 'nod_gone', name: 'Quill' } }), a)?.label).toBe('Quill');
    expect(nodeOwnerOf(task({ ownerId: 'per_x' }), a)).toBeNull();
  });

  it('maps the Owner field to exactly one of a person, a node or a crew', () => {
    expect(ownerValue(task({ assigneeRoomId: 'room_c' }))).toBe('crew:room_c');
    expect(ownerValue(task({ ownerId: 'per_x' }))).toBe('per_x');
    expect(ownerFields('node:nod_a')).toEqual({ ownerId: null, assigneeNodeId: 'nod_a', assigneeRoomId: null });
    expect(ownerFields('crew:room_c')).toEqual({ ownerId: null, assigneeNodeId: null, assigneeRoomId: 'room_c' });
    expect(ownerFields('per_x')).toEqual({ ownerId: 'per_x', assigneeNodeId: null, assigneeRoomId: null });
    expect(ownerFields('')).toEqual({ ownerId: null, assigneeNodeId: null, assigneeRoomId: null });
  });
});
