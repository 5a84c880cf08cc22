import { useQuery } from '@tanstack/react-query';
import { FleetHosts as FleetHostsSchema, type FleetHost } from '@hyperdesk/contract';
import { request } from '../../api/http';
import { adminKey } from '../../api/admin';
import { Badge, Panel } from './parts';
import { useColumnLabels } from './columnLabels';
import styles from './Admin.module.css';
import own from './FleetHosts.module.css';

/** The hosts refresh every 10 seconds while shown (a member going away shows within one refresh). */
const fleetHostsQuery = {
  queryKey: [...adminKey, 'fleet-hosts'],
  queryFn: () => request('GET', '/v1/admin/fleet/members', { schema: FleetHostsSchema }),
  refetchInterval: 10_000,
};

const GB = 1e9;
const gb = (n: number) => `${(n / GB).toFixed(n < 10 * GB ? 1 : 0)} GB`;
const STATUS_TONE: Record<string, 'good' | 'warn' | 'bad' | undefined> = { Running: 'good', Error: 'bad', Stopped: undefined };

function Meter({ used, total, label }: { used: number; total: number; label: string }) {
  const share = total > 0 ? Math.min(1, used / total) : 0;
  return (
    <span className={own.meter} role="meter" aria-label={label} aria-valuemin={0} aria-valuemax={100} aria-valuenow={Math.round(share * 100)}>
      <span className={`${own.meterFill} ${share > 0.85 ? own.meterHigh : ''}`} style={{ width: `${Math.round(share * 100)}%` }} />
    </span>
  );
}

function Load({ h }: { h: FleetHost }) {
  if (h.cpus === null) return <td>—</td>;
  const desktops = h.machines.filter((m) => m.status !== 'Stopped').length;
  return (
    <td>
      {h.cpus} CPUs
      {h.load !== null ? <span className={styles.sub}>load {h.load.toFixed(2)}</span> : null}
      <span className={styles.sub}>{desktops === 1 ? '1 desktop running' : `${desktops} desktops running`}</span>
      {h.load !== null ? <Meter used={h.load} total={h.cpus} label={`${h.name} CPU load`} /> : null}
    </td>
  );
}

/** "4.1 GB of 26 GB", the share used and its meter: a host's memory or storage. */
function Usage({ used, total, label }: { used: number; total: number; label: string }) {
  return (
    <>
      {gb(used)} of {gb(total)}
      <span className={styles.sub}>{Math.round((used / total) * 100)}% used</span>
      <Meter used={used} total={total} label={label} />
    </>
  );
}

function Memory({ h }: { h: FleetHost }) {
  if (h.memoryTotal === null || h.memoryUsed === null) return <td>—</td>;
  return (
    <td>
      <Usage used={h.memoryUsed} total={h.memoryTotal} label={`${h.name} memory used`} />
    </td>
  );
}

/** Past this share of its pool a host is nearly full: no desktop there can write once it is, whatever its quota. */
const STORAGE_NEARLY_FULL = 0.9;

function Storage({ h }: { h: FleetHost }) {
  if (h.storageTotal === null || h.storageUsed === null || h.storageTotal <= 0) return <td>—</td>;
  return (
    <td>
      <Usage used={h.storageUsed} total={h.storageTotal} label={`${h.name} storage used`} />
      {h.storageUsed / h.storageTotal >= STORAGE_NEARLY_FULL ? <span className={own.warn}>Nearly full: desktops here cannot write once it is</span> : null}
    </td>
  );
}

function Gpus({ h }: { h: FleetHost }) {
  if (!h.gpus.length) return <td>{h.online ? 'none' : '—'}</td>;
  const held = h.machines.filter((m) => m.gpu && m.status !== 'Stopped').length;
  // Identical cards once, with their count ("2 × NVIDIA Corporation TU104GL [Tesla T4]").
  const counts = new Map<string, number>();
  for (const g of h.gpus) {
    const model = [g.vendor, g.product].filter(Boolean).join(' ');
    counts.set(model, (counts.get(model) ?? 0) + 1);
  }
  return (
    <td>
      <ul className={own.gpus}>
        {[...counts].map(([model, n]) => (
          <li key={model}>{n > 1 ? `${n} × ${model}` : model}</li>
        ))}
      </ul>
      <span className={styles.sub}>{held} of {h.gpus.length} in use</span>
    </td>
  );
}

function Machines({ h }: { h: FleetHost }) {
  if (!h.machines.length) return <td>none</td>;
  return (
    <td>
      <ul className={own.machines}>
        {h.machines.map((m) => (
          <li key={m.instance} className={own.machine}>
            <span>{m.name ?? 'Left-over instance'}</span>
            <Badge tone={STATUS_TONE[m.status] ?? 'warn'}>{m.status.toLowerCase()}</Badge>
            <span className={styles.sub}>{m.owner ?? m.instance}</span>
          </li>
        ))}
      </ul>
    </td>
  );
}

const COLUMNS = ['Host', 'State', 'CPU', 'Memory', 'Storage', 'GPUs', 'Machines'] as const;

/** Hosts: each member of the cluster (or the one host), whether it is online, its load, storage, GPUs and machines. */
export default function FleetHosts() {
  const q = useQuery(fleetHostsQuery);
  const hosts = q.data?.members ?? [];
  const table = useColumnLabels(COLUMNS);
  return (
    <div className={own.hosts}>
      <Panel title="Hosts" hint="Where machines run: each host's state, load, storage, GPUs and machines. Updates every 10 seconds.">
        {q.isError ? <p role="alert">The hosts could not be loaded: {q.error.message}</p> : null}
        {q.data?.error ? <p role="alert">{q.data.error}</p> : null}
        {q.isPending ? <p role="status">Loading hosts…</p> : null}
        {q.data && !q.data.error && !hosts.length ? <p>This provider ({q.data.provider}) does not report its hosts.</p> : null}
        {hosts.length ? (
          <div className={styles.tableWrap}>
            <table ref={table} className={`${styles.table} ${styles.cards}`}>
              <caption className="sr-only">Hosts</caption>
              <thead>
                <tr>
                  {COLUMNS.map((c) => (
                    <th key={c} scope="col">
                      {c}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {hosts.map((h) => (
                  <tr key={h.name}>
                    <td>
                      <strong className={own.hostName}>{h.name}</strong>
                      <span className={styles.sub}>{h.message}</span>
                    </td>
                    <td>
                      <Badge tone={h.online ? 'good' : 'bad'}>{h.online ? 'online' : 'offline'}</Badge>
                    </td>
                    <Load h={h} />
                    <Memory h={h} />
                    <Storage h={h} />
                    <Gpus h={h} />
                    <Machines h={h} />
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ) : null}
      </Panel>
    </div>
  );
}
