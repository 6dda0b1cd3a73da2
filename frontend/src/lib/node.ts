// The Node view's data: nodes, their rooms and messages, as /api/node/… serves them (spec 002 §3,
// §8.6), and the pure steps that keep a room in step with the live stream (node.message,
// node.message.updated, node.status, node.frame).

import { request } from './api';
import { apiURL } from './session';
import { NODE_KINDS } from './events.gen';

export const NODE_EVENT_KINDS = NODE_KINDS;

/** The shapes a node's avatar is drawn as. */
export const SHAPES = ['orb', 'square', 'spark', 'hex', 'leaf', 'compass', 'pebble', 'bloom'] as const;

export interface Avatar {
  shape: string;
  color: string;
  eyes: string;
}

export interface Autonomy {
  createNodes?: string;
  helpers?: number;
}

export interface Node {
  id: string;
  name: string;
  slug: string;
  role: string;
  templateId?: string;
  charter: string;
  charterEdited?: boolean;
  avatar: Avatar;
  provider?: string;
  model?: string;
  effort?: string;
  status: 'active' | 'paused' | string;
  autonomy?: Autonomy;
  dmRoomId: string;
  parentId?: string;
  createdAt: string;
  updatedAt: string;
}

export interface RoomMember {
  nodeId: string;
  name: string;
  slug: string;
  role: string;
  avatar: Avatar;
  status: string;
}

export interface Room {
  id: string;
  kind: 'dm' | 'crew' | 'task' | string;
  title: string;
  dmNodeId?: string;
  leadNodeId?: string;
  members: RoomMember[] | null;
  readSeq: number;
  lastSeq: number;
  unread: number;
  last?: Message | null;
  lead?: string;
  createdAt: string;
  updatedAt: string;
}

export interface Template {
  id: string;
  name: string;
  slug: string;
  role: string;
  summary: string;
  avatar: Avatar;
  charter: string;
}

export interface Message {
  id: string;
  roomId: string;
  seq: number;
  author: 'person' | 'node' | 'system' | string;
  nodeId?: string;
  kind: 'text' | 'approval' | 'status' | 'error' | string;
  body: string;
  data?: unknown;
  private: boolean;
  replyToId?: string;
  clientId?: string;
  turnId?: string;
  deleted?: boolean;
  createdAt: string;
  updatedAt?: string;
}

export interface CardCall {
  proposalId: string;
  name: string;
  preview: string;
  risk?: string;
}

/** A computer card's question (runtime/node/computercard.go): the call and what it asks for. */
export interface ComputerAsk {
  tool: string;
  folder: string;
  command?: string;
  paths?: string[];
  url?: string;
  ask: { kind: 'folder' | 'address' | 'act' | string; value: string }[];
  always: boolean;
  keep?: 'once' | 'mission' | 'always' | string;
}

/** A file a node shared into the chat (node_share_file), as a file message's data lists it. */
export interface SharedFile {
  id: string;
  name: string;
  size: number;
  sha256: string;
  type: string;
  leftOut?: string[];
}

/** A folder or an address the owner let a node use on this computer (runtime/computer/kept.go). */
export interface KeptAnswer {
  id: string;
  nodeId: string;
  scope: { kind: 'folder' | 'address' | string; value: string };
  keep: 'mission' | 'always' | string;
  mission?: string;
  createdAt: string;
}

/** A sudo card's command (runtime/node/sudo.go). */
export interface SudoAsk {
  command: string;
  reason: string;
  folder: string;
  computer: string;
  hash: string;
  tries: number;
  exitCode?: number;
}

/** The answers a card takes: a computer card's Once, This mission and Always, else approve. */
export type CardDecision = 'approve' | 'discard' | 'once' | 'mission' | 'always';

/** An approval message's data (runtime/node/cards.go). */
export interface Card {
  type: 'tools' | 'node_proposal' | 'crew_add' | string;
  status: 'pending' | 'applying' | 'approved' | 'discarded' | 'expired' | string;
  nodeId?: string;
  calls?: CardCall[];
  action?: string;
  node?: { name?: string; slug?: string; role?: string; templateId?: string };
  crew?: { title?: string; nodeIds?: string[] };
  crewTitle?: string;
  computer?: ComputerAsk;
  sudo?: SudoAsk;
  secret?: { name: string; why: string; allow?: string[]; saved?: boolean };
  handle?: string;
  reason?: string;
  result?: string;
  error?: string;
  answeredAt?: string;
  answeredBy?: string;
  expiresAt?: string;
  // A login card (data.type "login", runtime/node/logincard.go): a tab handed to the owner.
  purpose?: 'sign_in' | 'human_check' | string;
  origin?: string;
  site?: string;
  tab?: string;
  loginId?: string;
  display?: boolean;
  takeover?: boolean;
  source?: string;
  command?: string;
  via?: string;
  note?: string;
  // A media_preview card (runtime/node/heldcapture.go): captures held for the owner's preview.
  evidence?: SharedFile[];
  reasons?: string[];
  answers?: Record<string, string>;
}

export interface Memory {
  id: string;
  nodeId: string;
  content: string;
  createdAt: string;
}

export interface Status {
  roomId: string;
  nodeId: string;
  state: 'thinking' | 'waiting' | 'idle' | string;
  cardId?: string;
  private: boolean;
  turnId?: string;
}

export interface ToolChip {
  callId: string;
  name: string;
  status: string;
  summary?: string;
  isWrite?: boolean;
}

export interface Frame {
  roomId: string;
  nodeId: string;
  turnId: string;
  private: boolean;
  type: 'text' | 'tool' | 'refs' | string;
  text?: string;
  tool?: ToolChip;
}

export interface Bootstrap {
  nodes: Node[];
  rooms: Room[];
  templates: Template[];
  limits?: Record<string, number>;
}

export interface NewNode {
  templateId?: string;
  name?: string;
  slug?: string;
  role?: string;
  charter?: string;
  avatar?: Avatar;
  provider?: string;
  model?: string;
  effort?: string;
}

export type NodeChange = Partial<Pick<Node, 'name' | 'slug' | 'role' | 'charter' | 'provider' | 'model' | 'effort' | 'status'>>;

const enc = encodeURIComponent;

export const nodeApi = {
  bootstrap: () =>
    request<Bootstrap>('GET', '/api/node/bootstrap').then((b) => ({
      nodes: b.nodes ?? [],
      rooms: b.rooms ?? [],
      templates: (b.templates ?? []).map(templateOf).filter((t) => t.id),
      limits: b.limits ?? {},
    })),
  nodes: () => request<{ nodes: Node[] | null }>('GET', '/api/node/nodes').then((r) => r.nodes ?? []),
  createNode: (n: NewNode) => request<Node>('POST', '/api/node/nodes', n),
  updateNode: (id: string, c: NodeChange) => request<Node>('PATCH', `/api/node/nodes/${enc(id)}`, c),
  deleteNode: (id: string) => request<unknown>('DELETE', `/api/node/nodes/${enc(id)}`),
  promote: (id: string) => request<Node>('POST', `/api/node/nodes/${enc(id)}/promote`),
  memory: (id: string) =>
    request<{ memories?: Memory[] | null; memory?: Memory[] | null }>('GET', `/api/node/nodes/${enc(id)}/memory`).then(
      (r) => r.memories ?? r.memory ?? [],
    ),
  remember: (id: string, content: string) => request<Memory>('POST', `/api/node/nodes/${enc(id)}/memory`, { content }),
  forget: (id: string, memoryId: string) => request<unknown>('DELETE', `/api/node/nodes/${enc(id)}/memory/${enc(memoryId)}`),
  createCrew: (c: { title: string; nodeIds: string[]; leadNodeId?: string }) => request<Room>('POST', '/api/node/crews', c),
  rooms: () => request<{ rooms: Room[] | null }>('GET', '/api/node/rooms').then((r) => r.rooms ?? []),
  deleteRoom: (id: string) => request<unknown>('DELETE', `/api/node/rooms/${enc(id)}`),
  messages: (roomId: string, q: { after?: number; before?: number; limit?: number } = {}) => {
    const p = new URLSearchParams();
    if (q.after) p.set('after', String(q.after));
    if (q.before) p.set('before', String(q.before));
    p.set('limit', String(q.limit ?? 100));
    return request<{ messages: Message[] | null }>('GET', `/api/node/rooms/${enc(roomId)}/messages?${p}`).then((r) => r.messages ?? []);
  },
  /** Uploads a file to a room, for the next message to carry (its id in attachments). */
  attach: async (roomId: string, file: File): Promise<SharedFile> => {
    const res = await fetch(apiURL(`/api/node/rooms/${enc(roomId)}/attachments?name=${enc(file.name)}`), {
      method: 'POST',
      body: file,
      credentials: 'same-origin',
      headers: { 'Content-Type': 'application/octet-stream' },
    });
    const out = (await res.json().catch(() => ({}))) as { attachment?: SharedFile; error?: string };
    if (!res.ok || !out.attachment) throw new Error(out.error || `The file could not be attached (${res.status}).`);
    return out.attachment;
  },
  post: (roomId: string, body: { body: string; clientId: string; replyToId?: string; private?: boolean; attachments?: string[] }) =>
    request<Message>('POST', `/api/node/rooms/${enc(roomId)}/messages`, body),
  read: (roomId: string, seq: number) => request<unknown>('POST', `/api/node/rooms/${enc(roomId)}/read`, { seq }),
  stop: (roomId: string, scope: 'room' | 'all' = 'room') => request<unknown>('POST', `/api/node/rooms/${enc(roomId)}/stop`, { scope }),
  message: (id: string) => request<Message>('GET', `/api/node/messages/${enc(id)}`),
  computerAnswers: (id: string) =>
    request<{ answers: KeptAnswer[] | null }>('GET', `/api/node/nodes/${enc(id)}/computer-answers`).then((r) => r.answers ?? []),
  revokeComputerAnswer: (id: string, answerId: string) => request<unknown>('DELETE', `/api/node/nodes/${enc(id)}/computer-answers/${enc(answerId)}`),
  answer: (messageId: string, decision: CardDecision) =>
    request<Message>('POST', `/api/node/approvals/${enc(messageId)}`, { decision }),
  /** One held file of a media_preview card, released (shown in the chat) or discarded. */
  answerHeldFile: (fileId: string, action: 'release' | 'discard') =>
    request<Message>('POST', `/api/node/evidence/${enc(fileId)}/${action}`),
};

/** A template as the runtime lists it: {id, name, …}, or Go's field names while its list is not
 * tagged for JSON yet. */
function templateOf(t: Template | Record<string, unknown>): Template {
  const r = t as Record<string, unknown>;
  const s = (a: string, b: string) => String(r[a] ?? r[b] ?? '');
  const av = (r.avatar ?? r.Avatar ?? {}) as Record<string, unknown>;
  return {
    id: s('id', 'ID'),
    name: s('name', 'Name'),
    slug: s('slug', 'Slug'),
    role: s('role', 'Role'),
    summary: s('summary', 'Summary'),
    charter: s('charter', 'Charter'),
    avatar: { shape: String(av.shape ?? av.Shape ?? 'orb'), color: String(av.color ?? av.Color ?? ''), eyes: String(av.eyes ?? av.Eyes ?? '') },
  };
}

/** A fresh id for a message being sent: a retry of the same message sends the same one. */
export function newClientId(): string {
  const c = globalThis.crypto;
  if (c && 'randomUUID' in c) return `web-${c.randomUUID()}`;
  return `web-${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
}

/** messages with m put in its place by seq (a message already there, by id or clientId, replaced). */
export function upsertMessage(messages: readonly Message[], m: Message): Message[] {
  const i = messages.findIndex((x) => x.id === m.id || (!!m.clientId && x.clientId === m.clientId && x.author === m.author));
  if (i >= 0) {
    const next = messages.slice();
    next[i] = m;
    return next;
  }
  const next = [...messages, m];
  if (next.length > 1 && next[next.length - 2].seq > m.seq) next.sort((a, b) => a.seq - b.seq);
  return next;
}

/** The card an approval message holds, or null. */
export function cardOf(m: Message): Card | null {
  if (m.kind !== 'approval' || !m.data || typeof m.data !== 'object') return null;
  return m.data as Card;
}

export const CARD_STATUS: Record<string, string> = {
  pending: 'Waiting for you',
  applying: 'Applying…',
  approved: 'Approved',
  discarded: 'Discarded',
  expired: 'Expired',
  working: 'Checking…',
  signed_in: 'Signed in',
  passed: 'Passed',
  declined: 'Not now',
  ended: 'Ended',
  released: 'Released',
};

/** A reply a node is writing now, from its frames. */
export interface LiveReply {
  turnId: string;
  nodeId: string;
  private: boolean;
  text: string;
  tools: ToolChip[];
}

/** replies with a frame applied: text appended, a tool chip added or brought up to date. */
export function applyFrame(replies: readonly LiveReply[], f: Frame): LiveReply[] {
  if (f.type !== 'text' && f.type !== 'tool') return replies as LiveReply[];
  const i = replies.findIndex((r) => r.turnId === f.turnId);
  const cur: LiveReply = i >= 0 ? replies[i] : { turnId: f.turnId, nodeId: f.nodeId, private: f.private, text: '', tools: [] };
  let next: LiveReply;
  if (f.type === 'text') next = { ...cur, text: cur.text + (f.text ?? '') };
  else if (f.tool) {
    const t = f.tool;
    const j = cur.tools.findIndex((x) => x.callId === t.callId);
    const tools = j >= 0 ? cur.tools.map((x, k) => (k === j ? { ...x, ...t } : x)) : [...cur.tools, t];
    next = { ...cur, tools };
  } else return replies as LiveReply[];
  const out = replies.slice();
  if (i >= 0) out[i] = next;
  else out.push(next);
  return out;
}

/** What a node's status says, for the line under the messages. */
export function statusLine(name: string, s: Status | undefined): string {
  if (!s) return '';
  if (s.state === 'thinking') return `${name} is thinking…`;
  if (s.state === 'waiting') return `${name} is waiting for you`;
  return '';
}

/** The room's name as the list shows it. */
export function roomTitle(r: Room, nodes: readonly Node[]): string {
  if (r.kind === 'dm') return nodes.find((n) => n.id === r.dmNodeId)?.name ?? r.title ?? 'Direct messages';
  return r.title || 'Crew';
}

/** A short preview of a room's newest message. */
export function preview(m: Message | null | undefined): string {
  if (!m) return '';
  const who = m.author === 'person' ? 'You: ' : '';
  const text = m.body.replace(/\s+/g, ' ').trim();
  return who + (text.length > 80 ? text.slice(0, 79) + '…' : text);
}

/** A tool's name as a chip shows it: "create_task" → "Create task". */
export function chipLabel(t: ToolChip): string {
  if (t.summary) return t.summary;
  const s = t.name.replace(/[_.-]+/g, ' ').trim();
  return (s.charAt(0).toUpperCase() + s.slice(1)) + (t.status === 'running' ? '…' : '');
}

/** A handle made from a name, as the runtime makes one: lower case, words joined by '-'. */
export function slugOf(name: string): string {
  return name
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 32);
}
