/** Where the gateway reaches a running desktop's VNC server (loopback for the local provider). */
export interface Endpoint {
  host: string;
  port: number;
}

export type ObservedDesktop = { state: 'running' | 'starting' | 'stopped'; endpoint?: Endpoint; reason?: string };

/**
 * A place where machines run (design §5, house rule 7). The reconciler is the only caller of start/stop; every
 * method is idempotent, so a pass interrupted anywhere (crash, restart) is simply repeated.
 */
export interface MachineProvider {
  kind: string;
  /** Starts (or adopts) the desktop of machineId; idempotent; resolves once the provider accepted the start. */
  start(m: { machineId: string; name: string }): Promise<void>;
  /** Observed state now. */
  describe(machineId: string): Promise<ObservedDesktop>;
  /** Idempotent; keeps the home folder. */
  stop(machineId: string): Promise<void>;
  /** stop + remove the home folder. */
  destroy(machineId: string): Promise<void>;
  /** Machine ids with live processes (adopted or cleaned up on boot). */
  list(): Promise<string[]>;
  /**
   * Why no machine can start here right now (e.g. the desktop programs are not installed), or null. Lets the
   * start call answer FAILED at once instead of a countdown that can only end in a failure.
   */
  preflight?(): Promise<string | null>;
}
