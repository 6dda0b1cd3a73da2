import { afterEach, describe, expect, it, vi } from 'vitest';
import { api, ApiError, errorSentence, onUnauthorized, UNREACHABLE } from './api';

describe('errorSentence', () => {
  it.each([
    [409, { error: 'A task that is done can move to To do or In progress.' }, 'A task that is done can move to To do or In progress.'],
    [400, { error: '  Title is empty.  ' }, 'Title is empty.'],
    [400, { error: '' }, 'The request was refused (HTTP 400).'],
    [404, null, 'The request was refused (HTTP 404).'],
    [401, {}, 'You are not signed in.'],
    [413, 'not json', 'That is too large to save.'],
    [502, null, 'Ensemble had a problem answering (HTTP 502); try again.'],
    [500, { error: 42 }, 'Ensemble had a problem answering (HTTP 500); try again.'],
  ])('%i %j → %s', (status, body, want) => expect(errorSentence(status, body)).toBe(want));
});

function reply(status: number, body: unknown) {
  return vi.fn(async (_url: string, _init?: RequestInit) =>
    new Response(body === undefined ? '' : JSON.stringify(body), { status }),
  );
}

describe('request', () => {
  afterEach(() => {
    vi.unstubAllGlobals();
    onUnauthorized(() => {});
  });

  it('sends JSON with no Authorization header and returns the body', async () => {
    const f = reply(200, { id: 'tsk_1', title: 'x' });
    vi.stubGlobal('fetch', f);
    const t = await api.updateTask('tsk_1', { title: 'x' });
    expect(t.id).toBe('tsk_1');
    const [url, init] = f.mock.calls[0];
    expect(url).toBe('/api/tasks/tsk_1');
    expect(init?.method).toBe('PATCH');
    expect(init?.body).toBe('{"title":"x"}');
    const headers = init?.headers as Record<string, string>;
    expect(headers['Content-Type']).toBe('application/json');
    expect(Object.keys(headers).map((h) => h.toLowerCase())).not.toContain('authorization');
  });

  it('turns a refused move into an ApiError with its sentence and allowed moves', async () => {
    vi.stubGlobal('fetch', reply(409, { error: 'A task that is done can move to To do.', allowed: ['todo'] }));
    const err = await api.updateTask('tsk_1', { status: 'blocked' }).catch((e) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err.status).toBe(409);
    expect(err.message).toBe('A task that is done can move to To do.');
    expect(err.allowed).toEqual(['todo']);
  });

  it('calls the unauthorized hook on 401', async () => {
    const hook = vi.fn();
    onUnauthorized(hook);
    vi.stubGlobal('fetch', reply(401, { error: 'Sign in first.' }));
    await expect(api.tasks()).rejects.toThrow('Sign in first.');
    expect(hook).toHaveBeenCalledOnce();
  });

  it('reports an unreachable server in one sentence', async () => {
    vi.stubGlobal('fetch', vi.fn(async () => Promise.reject(new TypeError('Failed to fetch'))));
    await expect(api.undo()).rejects.toThrow(UNREACHABLE);
  });

  it('escapes ids in paths', async () => {
    const f = reply(200, {});
    vi.stubGlobal('fetch', f);
    await api.deleteTask('a/b?c');
    expect(f.mock.calls[0][0]).toBe('/api/tasks/a%2Fb%3Fc');
  });
});
