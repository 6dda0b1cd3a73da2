import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { backoff, connectLive, type LiveState } from './live';
import type { LiveEvent } from './types';

class FakeES {
  static CONNECTING = 0;
  static OPEN = 1;
  static CLOSED = 2;
  static all: FakeES[] = [];
  readyState = FakeES.CONNECTING;
  onopen: (() => void) | null = null;
  onerror: (() => void) | null = null;
  listeners = new Map<string, ((e: { data: string }) => void)[]>();
  closed = false;
  constructor(
    public url: string,
    public init?: EventSourceInit,
  ) {
    FakeES.all.push(this);
  }
  addEventListener(kind: string, fn: (e: { data: string }) => void) {
    this.listeners.set(kind, [...(this.listeners.get(kind) ?? []), fn]);
  }
  close() {
    this.closed = true;
    this.readyState = FakeES.CLOSED;
  }
  // test helpers
  open() {
    this.readyState = FakeES.OPEN;
    this.onopen?.();
  }
  emit(kind: string, data: string, lastEventId?: string) {
    for (const fn of this.listeners.get(kind) ?? []) fn({ data, lastEventId } as { data: string });
  }
  fail(readyState: number) {
    this.readyState = readyState;
    this.onerror?.();
  }
}

describe('connectLive', () => {
  it('says when the stream closed for good, and not when EventSource retries by itself', () => {
    const live = start();
    FakeES.all[0].open();
    FakeES.all[0].fail(FakeES.CONNECTING);
    expect(closes).toBe(0);
    FakeES.all[0].fail(FakeES.CLOSED);
    expect(closes).toBe(1);
    live.close();
  });

  let events: LiveEvent[];
  let states: LiveState[];
  let restarts: number;
  let closes: number;
  const start = () =>
    connectLive({
      EventSource: FakeES as unknown as typeof EventSource,
      onEvent: (e) => events.push(e),
      onState: (s) => states.push(s),
      onRestart: () => restarts++,
      onClosed: () => closes++,
      retryMs: () => 100,
    });

  beforeEach(() => {
    FakeES.all = [];
    events = [];
    states = [];
    restarts = 0;
    closes = 0;
    vi.useFakeTimers();
  });
  afterEach(() => vi.useRealTimers());

  it('opens /api/events and reports live', () => {
    start();
    expect(FakeES.all[0].url).toBe('/api/events');
    FakeES.all[0].open();
    expect(states).toEqual(['connecting', 'live']);
  });

  it('listens per task kind and passes parsed data; ignores other kinds and bad JSON', () => {
    start();
    const es = FakeES.all[0];
    expect([...es.listeners.keys()].sort()).toEqual([
      'reset',
      'task.created',
      'task.purged',
      'task.restored',
      'task.trashed',
      'task.updated',
    ]);
    es.emit('task.created', '{"id":"tsk_1"}');
    es.emit('run.output', '{"id":"run_1"}');
    es.emit('task.updated', 'not json');
    expect(events).toEqual([{ kind: 'task.created', data: { id: 'tsk_1' } }]);
  });

  it('passes the event id as seq when there is one', () => {
    start();
    const es = FakeES.all[0];
    es.emit('task.created', '{"id":"tsk_1"}', '42');
    es.emit('task.created', '{"id":"tsk_2"}', '');
    expect(events).toEqual([
      { kind: 'task.created', data: { id: 'tsk_1' }, seq: 42 },
      { kind: 'task.created', data: { id: 'tsk_2' } },
    ]);
  });

  it('lets EventSource retry by itself while it is CONNECTING', () => {
    start();
    const es = FakeES.all[0];
    es.open();
    es.fail(FakeES.CONNECTING);
    expect(states.at(-1)).toBe('reconnecting');
    vi.advanceTimersByTime(10_000);
    expect(FakeES.all).toHaveLength(1);
    es.open();
    expect(states.at(-1)).toBe('live');
    expect(restarts).toBe(0);
  });

  it('opens a new stream after it closes for good, and asks for a reload once live', () => {
    start();
    FakeES.all[0].fail(FakeES.CLOSED);
    expect(FakeES.all).toHaveLength(1);
    vi.advanceTimersByTime(100);
    expect(FakeES.all).toHaveLength(2);
    FakeES.all[1].open();
    expect(restarts).toBe(1);
    expect(states.at(-1)).toBe('live');
  });

  it('asks for a reload when the server says to reset, and not for the events after it', () => {
    start();
    const es = FakeES.all[0];
    es.open();
    es.emit('reset', '{"newest":7}', '7');
    expect(restarts).toBe(1);
    es.emit('task.created', '{"id":"tsk_1"}', '8');
    expect(restarts).toBe(1);
    expect(events).toEqual([{ kind: 'task.created', data: { id: 'tsk_1' }, seq: 8 }]);
  });

  it('a reset goes to onReset when there is one', () => {
    let resets = 0;
    connectLive({
      EventSource: FakeES as unknown as typeof EventSource,
      onEvent: () => {},
      onState: () => {},
      onRestart: () => restarts++,
      onReset: () => resets++,
    });
    FakeES.all[0].emit('reset', '{"newest":7}', '7');
    expect([resets, restarts]).toEqual([1, 0]);
  });

  it('replays from since on the first stream only: a restart reads the lists again instead', () => {
    connectLive({
      EventSource: FakeES as unknown as typeof EventSource,
      since: 41,
      onEvent: () => {},
      onState: () => {},
      retryMs: () => 100,
    });
    expect(FakeES.all[0].url).toBe('/api/events?since=41');
    FakeES.all[0].fail(FakeES.CLOSED);
    vi.advanceTimersByTime(100);
    expect(FakeES.all[1].url).toBe('/api/events');
  });

  it('close() stops everything, including a pending retry', () => {
    const live = start();
    FakeES.all[0].fail(FakeES.CLOSED);
    live.close();
    vi.advanceTimersByTime(60_000);
    expect(FakeES.all).toHaveLength(1);
  });
});

describe('backoff', () => {
  it.each([
    [0, 1000],
    [1, 2000],
    [4, 16000],
    [5, 30000],
    [50, 30000],
  ])('attempt %i waits %i ms', (n, ms) => expect(backoff(n)).toBe(ms));
});
