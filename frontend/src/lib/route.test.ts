import { describe, expect, it } from 'vitest';
import { parseRoute, routeHash, type Route } from './route';

describe('routes', () => {
  it.each([
    ['', { name: 'board' }],
    ['#/', { name: 'board' }],
    ['#/nonsense', { name: 'board' }],
    ['#/task/', { name: 'board' }],
    ['#/task/tsk_1', { name: 'task', id: 'tsk_1' }],
    ['#task/tsk_1', { name: 'task', id: 'tsk_1' }],
    ['#/task/tsk_1/run/job_9', { name: 'task', id: 'tsk_1', run: 'job_9' }],
    ['#/task/a%20b', { name: 'task', id: 'a b' }],
    ['#/task/%E0%A4%A', { name: 'task', id: '%E0%A4%A' }],
    ['#/needs', { name: 'needs' }],
    ['#/settings', { name: 'settings' }],
    ['#/settings/assistant', { name: 'settings', section: 'assistant' }],
  ] as [string, Route][])('parseRoute(%j)', (hash, want) => expect(parseRoute(hash)).toEqual(want));

  it.each([
    { name: 'board' },
    { name: 'needs' },
    { name: 'settings' },
    { name: 'settings', section: 'assistant' },
    { name: 'task', id: 'tsk_1' },
    { name: 'task', id: 'a/b c', run: 'job_2' },
  ] as Route[])('round-trips %j', (r) => expect(parseRoute(routeHash(r))).toEqual(r));
});
