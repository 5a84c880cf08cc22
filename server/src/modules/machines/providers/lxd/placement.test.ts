import { describe, expect, it } from 'vitest';
import { currentOf, instanceName, parseInstance, staleOf } from './cluster';
import { NO_FREE_GPU, NO_MEMBER_ONLINE, place, type MemberLoad } from './placement';

const GiB = 1024 ** 3;
const member = (name: string, o: Partial<MemberLoad> = {}): MemberLoad => ({
  name,
  online: true,
  cpus: 8,
  memoryTotal: 32 * GiB,
  memoryUsed: 4 * GiB,
  gpus: 0,
  desktops: 0,
  gpuDesktops: 0,
  ...o,
});
const want = { cpus: 2, memoryBytes: 4 * GiB, gpu: false };

describe('placement of a new desktop', () => {
  it('goes to the member with the most free memory and CPU', () => {
    expect(place([member('a', { memoryUsed: 20 * GiB }), member('b')], want)).toEqual({ member: 'b' });
    expect(place([member('a'), member('b', { load: 7 })], want)).toEqual({ member: 'a' });
    // The scarcer of the two decides: b has memory to spare but its CPUs are taken by our desktops' limits.
    expect(place([member('a', { memoryUsed: 12 * GiB }), member('b', { desktops: 3 })], want)).toEqual({ member: 'a' });
  });

  it('leaves a member whose storage pool is nearly full for last, and takes it when nothing else fits', () => {
    const TB = 1e12;
    const full = { storageTotal: TB, storageUsed: 0.97 * TB };
    expect(place([member('a', full), member('b', { memoryUsed: 20 * GiB, storageTotal: TB, storageUsed: 0.2 * TB })], want)).toEqual({ member: 'b' });
    // A member that does not report its pool is not held back for it.
    expect(place([member('a', full), member('b')], want)).toEqual({ member: 'b' });
    // Storage does not decide whether a desktop fits: a full pool beats a member without the memory.
    expect(place([member('a', full), member('b', { memoryUsed: 30 * GiB })], want)).toEqual({ member: 'a' });
  });

  it("counts our desktops' limits, so desktops started together that use nothing yet spread over the members", () => {
    const members = [member('a'), member('b')];
    const chosen: string[] = [];
    for (let i = 0; i < 6; i++) {
      const p = place(members, want);
      if (!('member' in p)) throw new Error(p.error);
      chosen.push(p.member);
      members.find((m) => m.name === p.member)!.desktops++;
    }
    expect(chosen.filter((c) => c === 'a')).toHaveLength(3);
    expect(chosen.filter((c) => c === 'b')).toHaveLength(3);
  });

  it('skips members that are offline, and says so when none is online', () => {
    expect(place([member('a', { online: false }), member('b', { memoryUsed: 30 * GiB })], want)).toEqual({ member: 'b' });
    expect(place([member('a', { online: false })], want)).toEqual({ error: NO_MEMBER_ONLINE });
    expect(place([], want)).toEqual({ error: NO_MEMBER_ONLINE });
  });

  it('prefers a member where the desktop fits, and over-commits the least loaded one only when none does', () => {
    expect(place([member('a', { memoryUsed: 29 * GiB }), member('b', { cpus: 2, memoryTotal: 8 * GiB, memoryUsed: 1 * GiB })], want)).toEqual({ member: 'b' });
    expect(place([member('a', { desktops: 10 }), member('b', { desktops: 5 })], want)).toEqual({ member: 'b' });
  });

  it('gives a GPU desktop a member with a free GPU, or refuses', () => {
    const gpuWant = { ...want, gpu: true };
    const members = [member('cpu-only'), member('gpu-1', { gpus: 1, gpuDesktops: 1, desktops: 1 }), member('gpu-2', { gpus: 2, gpuDesktops: 1, desktops: 1, memoryUsed: 20 * GiB })];
    expect(place(members, gpuWant)).toEqual({ member: 'gpu-2' });
    expect(place(members.slice(0, 2), gpuWant)).toEqual({ error: NO_FREE_GPU });
    expect(place(members, want)).toEqual({ member: 'cpu-only' });
  });

  it('runs a desktop on the member that holds its home (a local pool), whatever the load, if that member can take it', () => {
    expect(place([member('a', { memoryUsed: 30 * GiB }), member('b')], { ...want, pin: 'a' })).toEqual({ member: 'a' });
    expect(place([member('a', { gpus: 1, gpuDesktops: 1 }), member('b', { gpus: 1 })], { ...want, gpu: true, pin: 'a' })).toEqual({ error: NO_FREE_GPU });
  });
});

describe('instance generations', () => {
  const id = '0f8fad5b-d9cb-469f-a165-70867728950e';
  it("names a machine's instances and finds the newest", () => {
    expect(instanceName(id, 0)).toBe(`hd-${id}`);
    expect(instanceName(id, 2)).toBe(`hd-${id}-g2`);
    expect(parseInstance(`hd-${id}-g2`)).toEqual({ machineId: id, gen: 2 });
    expect(parseInstance(`hd-${id}`)).toEqual({ machineId: id, gen: 0 });
    expect(parseInstance('other')).toBeNull();
    expect(currentOf(id, ['hd-x', `hd-${id}`, `hd-${id}-g1`])).toEqual({ name: `hd-${id}-g1`, gen: 1 });
    expect(currentOf(id, ['hd-x'])).toBeNull();
    expect(staleOf(['hd-x', `hd-${id}`, `hd-${id}-g1`, `hd-${id}-g2`])).toEqual([`hd-${id}`, `hd-${id}-g1`]);
  });
});
