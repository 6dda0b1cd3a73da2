// Windowing for long lists (a board column with hundreds of cards): only the items in and near
// the scrolled view are in the page; spacers stand for the rest. Items have their own heights,
// measured once shown; those not yet measured count as the average of those that were.

export interface Slice {
  /** The first item shown and one past the last. */
  start: number;
  end: number;
  /** The height of the items above the first shown and below the last: the spacers. */
  before: number;
  after: number;
}

/**
 * The items to show of `count`, whose heights (gaps included) are `heightOf(i)`, for a view of
 * `viewport` pixels scrolled to `scrollTop`, with `overscan` pixels more above and below. At least
 * one item is shown when there are any.
 */
export function visibleSlice(count: number, heightOf: (i: number) => number, scrollTop: number, viewport: number, overscan: number): Slice {
  const top = Math.max(0, scrollTop - overscan);
  const bottom = Math.max(scrollTop, 0) + Math.max(viewport, 0) + overscan;
  let y = 0;
  let start = -1;
  let end = count;
  let before = 0;
  for (let i = 0; i < count; i++) {
    const h = heightOf(i);
    if (start < 0 && y + h > top) {
      start = i;
      before = y;
    }
    if (start >= 0 && y >= bottom) {
      end = i;
      break;
    }
    y += h;
  }
  if (start < 0) {
    // Scrolled past the end (the list got shorter): show the last item.
    start = Math.max(0, count - 1);
    before = 0;
    for (let i = 0; i < start; i++) before += heightOf(i);
  }
  end = Math.max(end, Math.min(count, start + 1));
  let after = 0;
  for (let i = end; i < count; i++) after += heightOf(i);
  return { start, end, before, after };
}

/** Where item i starts: the heights of the items before it. */
export function offsetOf(i: number, heightOf: (i: number) => number): number {
  let y = 0;
  for (let k = 0; k < i; k++) y += heightOf(k);
  return y;
}

/** Measured heights by key, and the estimate for the rest: their average, or `fallback`. */
export class Heights {
  private by = new Map<string, number>();
  private sum = 0;
  constructor(private fallback: number) {}

  /** Records a height; returns whether it changed. */
  set(key: string, h: number): boolean {
    const old = this.by.get(key);
    if (old === h || h <= 0) return false;
    this.sum += h - (old ?? 0);
    this.by.set(key, h);
    return true;
  }

  get(key: string): number {
    return this.by.get(key) ?? this.estimate();
  }

  estimate(): number {
    return this.by.size ? this.sum / this.by.size : this.fallback;
  }
}
