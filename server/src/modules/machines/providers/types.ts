import type { Endpoint } from './endpoint';
import type { DesktopFiles } from './desktop-files';

export type { Endpoint } from './endpoint';

export type ObservedDesktop = {
  state: 'running' | 'starting' | 'stopped';
  /** The desktop's VNC server. */
  endpoint?: Endpoint;
  /** The machine's streaming agent (WebRTC signaling, newline-delimited JSON); absent where none runs. */
  agent?: Endpoint;
  reason?: string;
  /**
   * The provider has just seen `endpoint` greet (an RFB probe), so the caller need not probe again: a VNC server
   * greets a new connection only every quarter second, and a classroom's pass would wait twice as long.
   */
  answered?: boolean;
  /**
   * The host it ran on is gone (a lost cluster member): the reconciler marks the machine stopped with `reason`
   * instead of restarting it at once; its next Start runs it elsewhere.
   */
  lost?: boolean;
};

/** A host of the fleet (a cluster member, or the one host) as the operator console shows it. */
export interface FleetMember {
  name: string;
  online: boolean;
  message: string;
  cpus: number | null;
  memoryTotal: number | null;
  memoryUsed: number | null;
  /** The 1-minute load average where the engine reports it. */
  load: number | null;
  gpus: { vendor: string; product: string }[];
  /** The desktops' storage pool on the host (roots and homes): bytes used and its size. */
  storageUsed: number | null;
  storageTotal: number | null;
  machines: { machineId: string; instance: string; status: string; gpu: boolean }[];
}

/**
 * A place where machines run (design §5, house rule 7). The reconciler is the only caller of start/stop; every
 * method is idempotent, so a pass interrupted anywhere (crash, restart) is simply repeated.
 */
export interface MachineProvider {
  kind: string;
  /** Starts (or adopts) the desktop of machineId; idempotent; resolves once the provider accepted the start. */
  start(m: {
    machineId: string;
    name: string;
    /**
     * Whose home folder the desktop gets: the machine's own for single users, one per (course, student) on course
     * machines, so a seat that moves to another student never shows the previous student's files. Defaults to
     * machineId.
     */
    homeKey?: string;
    /** The IANA zone the desktop's clock and programs show (the machine's country's); UTC when absent or unknown. */
    timeZone?: string;
  }): Promise<void>;
  /**
   * Makes a new machine's desktop ahead of its first start without starting it (the instance from the image and the
   * home `homeKey`, default machineId), so that its first start does not wait for them to be made. Idempotent: a
   * desktop that exists is left as it is. Absent: the first start makes it.
   */
  prepare?(m: { machineId: string; name: string; homeKey?: string; timeZone?: string }): Promise<void>;
  /** Observed state now. */
  describe(machineId: string): Promise<ObservedDesktop>;
  /**
   * Where a running desktop's VNC server and streaming agent are, without asking them (describe's probe of the VNC
   * server costs a connection, 0.3 s here): for a tab connecting to a machine the reconciler already saw online.
   * Null when the desktop is not running. Absent: describe is used.
   */
  endpoints?(machineId: string): Promise<{ endpoint: Endpoint; agent?: Endpoint } | null>;
  /** Idempotent; keeps the home folder. */
  stop(machineId: string): Promise<void>;
  /** stop + remove the home folder. */
  destroy(machineId: string): Promise<void>;
  /**
   * Reset machine: ends the desktop and brings it back to the image (what was installed or changed outside the
   * home goes); with `eraseHome`, the home of `homeKey` is erased too. The next start builds it afresh. Idempotent.
   */
  reset(machineId: string, opts: { homeKey: string; eraseHome: boolean }): Promise<void>;
  /** Deletes a home folder that no machine uses any more (course data retention); idempotent. */
  removeHome?(homeKey: string): Promise<void>;
  /** Machine ids with live processes (adopted or cleaned up on boot). */
  list(): Promise<string[]>;
  /**
   * Why no machine can start here right now (e.g. the desktop programs are not installed), or null. Lets the
   * start call answer FAILED at once instead of a countdown that can only end in a failure.
   */
  preflight?(): Promise<string | null>;
  /** The hosts machines run on, their load and machines (the console's Fleet page); absent where not known. */
  fleet?(): Promise<FleetMember[]>;
  /** Moving files in and out of a running desktop, as its user (the Files panel); absent where unsupported. */
  files?: DesktopFiles;
  /**
   * Calls `listener` when a desktop's state may have changed without being asked (one that was starting answers), so
   * the reconciler looks at once instead of at its next pass. Absent: the reconciler's passes find it.
   */
  onChange?(listener: () => void): void;
}
