import { describe, expect, it } from 'vitest';
import type { Decision, NeedItem } from './needs';
import { needs, signals } from './shared.svelte';

describe('shared state', () => {
  it('counts what waits on Needs me from the items, a settled one not', () => {
    const d = (id: string) => ({ id, kind: 'question', status: 'open', source: {} }) as unknown as Decision;
    needs.items = [{ d: d('a') }, { d: d('b'), note: 'Answered on the phone.' }, { d: d('c') }] as NeedItem[];
    expect(needs.open).toBe(2);
    needs.items = [];
    expect(needs.open).toBe(0);
  });

  it('starts its signals at rest', () => {
    expect([signals.runs, signals.sessions, signals.profiles, signals.terminalClosed]).toEqual([0, 0, 0, 0]);
    expect(signals.conversation).toBeNull();
  });
});
