import { describe, expect, it } from 'vitest';
import { apiURL, forgetSession, sessionBase, takeSignin, type SessionStore } from './session';

class MemStore implements SessionStore {
  m = new Map<string, string>();
  getItem(k: string) {
    return this.m.get(k) ?? null;
  }
  setItem(k: string, v: string) {
    this.m.set(k, v);
  }
  removeItem(k: string) {
    this.m.delete(k);
  }
}

describe('session', () => {
  it('takes the id from the sign-in fragment and sends API requests under its path', () => {
    const s = new MemStore();
    expect(takeSignin('#signin=Ab3_x-9Zk2LmQp', s)).toBe('#/');
    expect(sessionBase(s)).toBe('/s/Ab3_x-9Zk2LmQp');
    expect(apiURL('/api/tasks', s)).toBe('/s/Ab3_x-9Zk2LmQp/api/tasks');
    expect(apiURL('/auth/signin', s)).toBe('/auth/signin');
    forgetSession(s);
    expect(apiURL('/api/tasks', s)).toBe('/api/tasks');
  });

  it('leaves other fragments alone and keeps no id that is not one', () => {
    const s = new MemStore();
    expect(takeSignin('#/task/tsk_1', s)).toBeNull();
    expect(takeSignin('#signin=../../evil', s)).toBe('#/');
    expect(takeSignin('#signin=', s)).toBe('#/');
    expect(sessionBase(s)).toBe('');
    s.setItem('ensemble.session', 'a/b?c');
    expect(apiURL('/api/tasks', s)).toBe('/api/tasks');
  });

  it('works without storage', () => {
    expect(takeSignin('#signin=Ab3_x-9Zk2LmQp', null)).toBe('#/');
    expect(apiURL('/api/tasks', null)).toBe('/api/tasks');
  });
});
