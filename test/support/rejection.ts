import { expect } from 'vitest';

/** The error `p` rejects with, expected to be a `type` (the test fails when it is another, or when `p` fulfils). */
export async function rejection<E>(p: Promise<unknown>, type: abstract new (...args: never[]) => E): Promise<E> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(type);
    return err as E;
  }
  throw new Error(`expected a ${type.name}, the promise fulfilled`);
}
