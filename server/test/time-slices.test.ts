import { expect, test } from 'vitest';
import { SLICE_MS, TimeSlices, requestTaken } from '../src/time-slices';

test("a call's slices count from when its request was taken up, so its checks and queries before the long work are in the first slice", () => {
  requestTaken(performance.now() - SLICE_MS - 1);
  expect(new TimeSlices().due()).toBe(true);
  requestTaken(performance.now());
  expect(new TimeSlices().due()).toBe(false);
});

test('after a pause, a new slice starts from the pause', async () => {
  requestTaken(performance.now() - SLICE_MS - 1);
  const slices = new TimeSlices();
  await slices.pause();
  expect(slices.due()).toBe(false);
});
