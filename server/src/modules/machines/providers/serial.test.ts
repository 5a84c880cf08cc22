import { describe, expect, it } from 'vitest';
import { perKeySerial } from './serial';

describe('perKeySerial', () => {
  it("runs one key's operations one after another, other keys alongside, and a failure does not stop the next", async () => {
    const serial = perKeySerial();
    const log: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const first = serial('a', async () => {
      log.push('a1 start');
      await gate;
      log.push('a1 end');
      throw new Error('a1 failed');
    });
    const second = serial('a', async () => {
      log.push('a2');
      return 2;
    });
    const other = serial('b', async () => {
      log.push('b1');
      return 'b';
    });
    expect(await other).toBe('b');
    expect(log).toEqual(['a1 start', 'b1']); // b did not wait for a; a2 waits for a1
    release();
    await expect(first).rejects.toThrow('a1 failed');
    expect(await second).toBe(2);
    expect(log).toEqual(['a1 start', 'b1', 'a1 end', 'a2']);
  });
});
