import { describe, expect, it } from 'vitest';
import { pausedWords, siteOf } from './runlive';

describe('run live picture words', () => {
  it.each([
    ['sensitive', 'sign-in'],
    ['controlled', 'you control'],
    ['secret_on_screen', 'saved secret'],
    ['something new', 'Paused.'],
  ])('%s', (paused, word) => {
    expect(pausedWords(paused)).toContain(word);
  });
  it.each([
    ['https://www.example.com/a/b', 'example.com'],
    ['http://127.0.0.1:5173/x', '127.0.0.1:5173'],
    ['about:blank', ''],
    ['', ''],
    ['not a url', ''],
  ])('site of %s', (url, site) => {
    expect(siteOf(url)).toBe(site);
  });
});
