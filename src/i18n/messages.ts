import type { en } from './en';

/** The shape of a dictionary: English's keys, with the same parameters for each message. */
export type Messages = {
  readonly [K in keyof typeof en]: (typeof en)[K] extends (...args: infer A) => string ? (...args: A) => string : string;
};
