import { describe, expect, it } from 'vitest';
import { FAMILIES, RUN_KINDS, TASK_KINDS } from './events.gen';
import { kindsFilter } from './live';
import { followRun, isRunEventOf, type LogPage, type TraceState } from './runs';
import { SharedStream } from './stream.svelte';
import type { LiveEvent } from './types';

const ev = (seq: number, kind: string, runId = 'job_1', extra: object = {}): LiveEvent => ({ seq, kind, data: { runId, ...extra } });

function deferred<T>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

const tick = () => new Promise((r) => setTimeout(r, 0));

describe('followRun', () => {
  it('reads the log, then applies what the stream brought meanwhile, once', async () => {
    const stream = new SharedStream();
    const reads: number[] = [];
    const pages = [deferred<LogPage>(), deferred<LogPage>()];
    let traces: TraceState[] = [];
    const f = followRun({
      jobId: 'job_1',
      subscribe: (fn) => stream.subscribe(fn),
      readLog: (after) => {
        reads.push(after);
        return pages[reads.length - 1].promise;
      },
      onTrace: (t) => traces.push(t),
    });
    // Live while the log is read: held, and the one the log also has is skipped by seq.
    stream.publish(ev(3, 'run.message', 'job_1', { text: 'three' }));
    stream.publish(ev(4, 'run.message', 'job_2', { text: 'another run' }));
    stream.publish(ev(5, 'task.updated', 'job_1'));
    pages[0].resolve({ events: [ev(1, 'run.created', 'job_1', { agent: 'codex' }), ev(2, 'run.status', 'job_1', { status: 'running' })], more: true });
    await tick();
    expect(traces).toEqual([]);
    pages[1].resolve({ events: [ev(3, 'run.message', 'job_1', { text: 'three' })], more: false });
    await tick();
    expect(reads).toEqual([0, 2]);
    expect(traces).toHaveLength(1);
    expect(traces[0].rows.map((r) => r.kind)).toEqual(['run.created', 'run.message']);
    expect(traces[0].status).toBe('running');
    // Then live.
    stream.publish(ev(6, 'run.message', 'job_1', { text: 'six' }));
    expect(traces.at(-1)!.rows.map((r) => r.key)).toEqual(['e1', 'e3', 'e6']);
    // After a gap the trace is read again from its start.
    traces = [];
    pages.push(deferred<LogPage>());
    f.reload();
    stream.publish(ev(7, 'run.ended', 'job_1', { status: 'done' }));
    pages[2].resolve({ events: [ev(1, 'run.created'), ev(6, 'run.message', 'job_1', { text: 'six' })], more: false });
    await tick();
    expect(reads).toEqual([0, 2, 0]);
    expect(traces).toHaveLength(1);
    expect(traces[0].rows.map((r) => r.key)).toEqual(['e1', 'e6', 'e7']);
    f.close();
    stream.publish(ev(8, 'run.message', 'job_1', { text: 'after close' }));
    expect(traces).toHaveLength(1);
  });

  it('tries the log again when it cannot be read', async () => {
    const stream = new SharedStream();
    let n = 0;
    const traces: TraceState[] = [];
    const f = followRun({
      jobId: 'job_1',
      subscribe: (fn) => stream.subscribe(fn),
      readLog: () => (n++ === 0 ? Promise.reject(new Error('offline')) : Promise.resolve({ events: [ev(1, 'run.created')], more: false })),
      onTrace: (t) => traces.push(t),
      retryMs: 1,
    });
    await new Promise((r) => setTimeout(r, 20));
    expect(n).toBe(2);
    expect(traces.at(-1)!.rows).toHaveLength(1);
    f.close();
  });

  it('knows a run event of its run', () => {
    expect(isRunEventOf(ev(1, 'run.created'), 'job_1')).toBe(true);
    expect(isRunEventOf(ev(1, 'run.created', 'job_2'), 'job_1')).toBe(false);
    expect(isRunEventOf(ev(1, 'needs.created'), 'job_1')).toBe(false);
    expect(isRunEventOf({ kind: 'run.created', data: null }, 'job_1')).toBe(false);
  });
});

describe('kindsFilter', () => {
  it('asks for whole families by name and the rest by kind', () => {
    expect(kindsFilter([...TASK_KINDS, ...RUN_KINDS, 'session.deleted', 'needs.created'])).toBe('task.,run.,session.,needs.created');
    expect(kindsFilter(['reset', 'profile.changed'])).toBe('profile.');
  });

  it('has every family the runtime declares', () => {
    expect(Object.keys(FAMILIES)).toContain('run');
    for (const [family, kinds] of Object.entries(FAMILIES)) for (const k of kinds) expect(k.startsWith(`${family}.`)).toBe(true);
  });
});

describe('SharedStream', () => {
  it('fans events out to its subscribers until they leave', () => {
    const s = new SharedStream();
    const a: number[] = [];
    const b: number[] = [];
    const offA = s.subscribe((e) => a.push(e.seq ?? 0));
    s.subscribe((e) => b.push(e.seq ?? 0));
    s.publish(ev(1, 'run.created'));
    offA();
    s.publish(ev(2, 'run.status'));
    expect(a).toEqual([1]);
    expect(b).toEqual([1, 2]);
    s.gap();
    expect(s.gaps).toBe(1);
  });
});
