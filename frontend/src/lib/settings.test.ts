import { describe, expect, it } from 'vitest';
import { ago, agentOrder, canSignIn, codeParts, problemText, sandboxText, grantsText, liveKeys, phonesFrom, signInText, tunnelText, type Agent, type EditorKey } from './settings';

const agent = (a: Partial<Agent>): Agent => ({ name: 'claude', title: 'Claude Code', installed: true, signedIn: 'unknown', login: 'claude', ...a });

describe('agents', () => {
  it('says the sign-in state', () => {
    expect(signInText(agent({ installed: false }))).toBe('Not installed');
    expect(signInText(agent({ signedIn: 'yes' }))).toBe('Signed in');
    expect(signInText(agent({ signedIn: 'no' }))).toBe('Signed out');
    expect(signInText(agent({ signedIn: 'unknown' }))).toBe('Checks on first use');
  });
  it('offers sign-in only to an installed agent not known to be signed in', () => {
    expect(canSignIn(agent({ signedIn: 'no' }))).toBe(true);
    expect(canSignIn(agent({ signedIn: 'unknown' }))).toBe(true);
    expect(canSignIn(agent({ signedIn: 'yes' }))).toBe(false);
    expect(canSignIn(agent({ installed: false, signedIn: 'no' }))).toBe(false);
    expect(canSignIn(agent({ signedIn: 'no', login: '' }))).toBe(false);
  });
});

describe('keys', () => {
  it('says the grants', () => {
    expect(grantsText({ canWrite: false, canUseApps: false })).toBe('May read');
    expect(grantsText({ canWrite: true, canUseApps: false })).toBe('May read and make changes');
    expect(grantsText({ canWrite: true, canUseApps: true })).toBe('May read, make changes and use connected apps');
  });
  it('lists live keys newest first', () => {
    const k = (id: string, createdAt: string, revokedAt: string | null = null): EditorKey =>
      ({ id, name: id, hint: 'abcd', canWrite: false, canUseApps: false, createdAt, lastUsedAt: null, revokedAt });
    const out = liveKeys([k('a', '2026-01-01T00:00:00Z'), k('b', '2026-02-01T00:00:00Z'), k('c', '2026-03-01T00:00:00Z', '2026-03-02T00:00:00Z')]);
    expect(out.map((x) => x.id)).toEqual(['b', 'a']);
  });
});

describe('ago', () => {
  const now = new Date('2026-05-10T12:00:00Z');
  it('reads relative times', () => {
    expect(ago(null, now)).toBe('never');
    expect(ago('0001-01-01T00:00:00Z', now)).toBe('never');
    expect(ago('2026-05-10T11:59:30Z', now)).toBe('just now');
    expect(ago('2026-05-10T11:55:00Z', now)).toBe('5 min ago');
    expect(ago('2026-05-10T09:00:00Z', now)).toBe('3 h ago');
    expect(ago('2026-05-09T09:00:00Z', now)).toBe('yesterday');
    expect(ago('2026-05-05T12:00:00Z', now)).toBe('5 days ago');
    expect(ago('2026-01-05T12:00:00Z', now)).toBe('2026-01-05');
  });
});

describe('phones', () => {
  it('is not set up without a relay', () => {
    expect(phonesFrom({ devices: [], relay: '' })).toEqual({ devices: [], setup: true });
    expect(phonesFrom(null).setup).toBe(true);
    const d = { id: 'phone_1', name: 'iPhone', createdAt: '2026-01-01T00:00:00Z' };
    expect(phonesFrom({ devices: [d], relay: 'x.relay.test' })).toEqual({ devices: [d], setup: false, host: 'x.relay.test', status: undefined, taken: '' });
  });

  it('carries the tunnel and a taken address', () => {
    const status = { host: 'x.relay.test', up: false, taken: 2, error: 'another runtime took it' };
    const p = phonesFrom({ devices: [], relay: 'x.relay.test', access: { status, taken: 'Another copy took it.' } });
    expect(p.taken).toBe('Another copy took it.');
    expect(tunnelText(p.status)).toBe('Not connected to the relay: another runtime took it');
    expect(tunnelText({ host: 'x', up: true })).toBe('Connected to the relay');
    expect(tunnelText({ host: 'x', up: false })).toBe('Connecting to the relay…');
    expect(tunnelText(undefined)).toBe('');
  });
});

describe('codeParts', () => {
  it('splits at backticks', () => {
    expect(codeParts('Run `a b` then `c`.')).toEqual([
      { text: 'Run ', code: false },
      { text: 'a b', code: true },
      { text: ' then ', code: false },
      { text: 'c', code: true },
      { text: '.', code: false },
    ]);
  });
});

describe('problemText and agentOrder', () => {
  it('drops what the state says and ends the sentence', () => {
    expect(problemText(agent({ installed: false, problem: 'agent not installed: Qwen Code (qwen) was not found; install it' }))).toBe(
      'Qwen Code (qwen) was not found; install it.',
    );
    expect(problemText(agent({ problem: 'Sign in first.' }))).toBe('Sign in first.');
    expect(problemText(agent({}))).toBe('');
  });
  it('puts installed agents first', () => {
    const list = [agent({ name: 'a', installed: false }), agent({ name: 'b' }), agent({ name: 'c', installed: false }), agent({ name: 'd' })];
    expect(agentOrder(list).map((a) => a.name)).toEqual(['b', 'd', 'a', 'c']);
  });
});

describe('agents not installed', () => {
  it('fold into one line', async () => {
    const { notInstalledLine } = await import('./settings');
    const a = (name: string, installed: boolean, title = '') => ({ name, title, installed, signedIn: 'unknown' as const });
    expect(notInstalledLine([a('claude', true), a('cursor', false, 'Cursor'), a('gemini', false, 'Gemini CLI'), a('qwen', false)])).toBe(
      'Not installed: Cursor, Gemini CLI and qwen.',
    );
    expect(notInstalledLine([a('kimi', false, 'Kimi Code')])).toBe('Not installed: Kimi Code.');
    expect(notInstalledLine([a('claude', true)])).toBe('');
  });
});

describe('sandboxText', () => {
  const base = { name: 'opencode', title: 'OpenCode', installed: true, signedIn: 'unknown' as const };
  it('says what confines the runs, or why nothing can', () => {
    expect(sandboxText({ ...base, sandbox: { ok: true, by: 'ensemble', whole: true } })).toContain("Ensemble's OS sandbox");
    expect(sandboxText({ ...base, sandbox: { ok: true, by: 'claude' } })).toContain('its own OS sandbox');
    expect(sandboxText({ ...base, sandbox: { ok: false, problem: 'Install bubblewrap.' } })).toBe('Install bubblewrap.');
    expect(sandboxText({ ...base, installed: false, sandbox: { ok: false, problem: 'x' } })).toBe('');
  });
});
