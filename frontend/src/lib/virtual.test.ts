import { describe, expect, it } from 'vitest';
import { Heights, offsetOf, visibleSlice } from './virtual';

const even = (h: number) => () => h;

describe('visibleSlice', () => {
  it('shows what fits the view and the overscan, with spacers for the rest', () => {
    // 1,000 items of 50 px, a 400 px view at the top, 100 px overscan: items 0..9 (0–500 px).
    expect(visibleSlice(1000, even(50), 0, 400, 100)).toEqual({ start: 0, end: 10, before: 0, after: 990 * 50 });
  });

  it('follows the scroll', () => {
    // Scrolled to 5,000 px: from 4,900 to 5,500 px, items 98..109.
    const s = visibleSlice(1000, even(50), 5000, 400, 100);
    expect(s).toEqual({ start: 98, end: 110, before: 98 * 50, after: (1000 - 110) * 50 });
    expect(s.before + (s.end - s.start) * 50 + s.after).toBe(50_000);
  });

  it('takes each item at its own height', () => {
    const hs = [100, 20, 20, 300, 20];
    const s = visibleSlice(hs.length, (i) => hs[i], 130, 50, 0);
    expect(s).toEqual({ start: 2, end: 4, before: 120, after: 20 });
  });

  it('shows everything when it all fits, and nothing of nothing', () => {
    expect(visibleSlice(3, even(50), 0, 800, 200)).toEqual({ start: 0, end: 3, before: 0, after: 0 });
    expect(visibleSlice(0, even(50), 0, 800, 200)).toEqual({ start: 0, end: 0, before: 0, after: 0 });
  });

  it('shows the last item when scrolled past a list that got shorter', () => {
    expect(visibleSlice(4, even(50), 9000, 400, 0)).toEqual({ start: 3, end: 4, before: 150, after: 0 });
  });

  it('shows an item before the view is measured', () => {
    expect(visibleSlice(10, even(50), 0, 0, 0)).toEqual({ start: 0, end: 1, before: 0, after: 450 });
  });
});

describe('Heights', () => {
  it('estimates the unmeasured by the average of the measured', () => {
    const h = new Heights(70);
    expect(h.get('a')).toBe(70);
    expect(h.set('a', 40)).toBe(true);
    expect(h.set('b', 60)).toBe(true);
    expect(h.set('b', 60)).toBe(false);
    expect(h.get('c')).toBe(50);
    h.set('a', 100);
    expect(h.get('c')).toBe(80);
    expect(offsetOf(2, (i) => h.get(['a', 'b', 'c'][i]))).toBe(160);
  });
});
