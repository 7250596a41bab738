import { describe, expect, it } from 'vitest';
import { formatDuration, formatSize } from './format';

describe('formatting', () => {
  it('sizes in binary multiples', () => {
    expect(formatSize(0)).toBe('0 B');
    expect(formatSize(1536)).toBe('1.5 KB');
    expect(formatSize(10 * 1024 ** 3)).toBe('10 GB');
  });

  it('durations as the two largest units, for throttled logins', () => {
    expect(formatDuration(95)).toBe('1 minute 35 seconds');
    expect(formatDuration(1)).toBe('1 second');
    expect(formatDuration(3600)).toBe('1 hour');
    expect(formatDuration(7260)).toBe('2 hours 1 minute');
  });
});
