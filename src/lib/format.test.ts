import { describe, expect, it } from 'vitest';
import { daysBetween, formatCount, formatDate, formatDuration, formatSize, formatTime } from './format';

describe('formatting', () => {
  it('sizes in binary multiples', () => {
    expect(formatSize(0)).toBe('0 B');
    expect(formatSize(1023)).toBe('1,023 B');
    expect(formatSize(1536)).toBe('1.5 KB');
    expect(formatSize(150 * 1024 * 1024)).toBe('150 MB');
    expect(formatSize(10 * 1024 ** 3)).toBe('10 GB');
    expect(formatSize(-1)).toBe('');
    expect(formatSize(1536, 'zh-CN')).toBe('1.5 KB');
  });

  it('counts with grouping in the language', () => {
    expect(formatCount(100000, 'en')).toBe('100,000');
  });

  it('times and dates in the language, empty for a missing or invalid time', () => {
    expect(formatTime('2026-11-21T08:01:03Z', 'en')).toMatch(/2026/);
    expect(formatDate('2026-12-21T08:01:39Z', 'zh-CN')).toMatch(/2026年12月2[01]日/);
    expect(formatTime('')).toBe('');
    expect(formatDate('not a time')).toBe('');
  });

  it('days between a deletion and its purge: the retention of the bin', () => {
    expect(daysBetween('2026-11-21T08:01:39Z', '2026-12-21T08:01:39Z')).toBe(30);
    expect(daysBetween('2026-11-21T08:01:39Z', '2026-11-28T09:00:00Z')).toBe(7);
    expect(daysBetween('', '2026-12-21T08:01:39Z')).toBeUndefined();
    expect(daysBetween('2026-12-21T08:01:39Z', '2026-11-21T08:01:39Z')).toBeUndefined();
  });

  it('durations as the two largest units, for throttled logins', () => {
    expect(formatDuration(95)).toBe('1 minute 35 seconds');
    expect(formatDuration(1)).toBe('1 second');
    expect(formatDuration(3600)).toBe('1 hour');
    expect(formatDuration(7260)).toBe('2 hours 1 minute');
    const chinese = { hour: (n: number) => `${n} 小时`, minute: (n: number) => `${n} 分钟`, second: (n: number) => `${n} 秒`, join: ' ' };
    expect(formatDuration(95, chinese)).toBe('1 分钟 35 秒');
  });
});
