export function Spinner({ label = 'Loading', center = false, small = false }: { label?: string; center?: boolean; small?: boolean }) {
  const el = <span className={small ? 'spinner spinner-sm' : 'spinner'} role="status" aria-label={label} />;
  return center ? <div className="center-fill">{el}</div> : el;
}
