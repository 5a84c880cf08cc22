import type { ReactNode } from 'react';
import type { InfiniteData, UseInfiniteQueryResult } from '@tanstack/react-query';
import { Spinner } from '../../components/Spinner';
import { useColumnLabels } from './columnLabels';
import styles from './Admin.module.css';

type Paged<T> = UseInfiniteQueryResult<InfiniteData<{ items: T[]; next: string | null }>>;

/** A column heading; `num` right-aligns the column (counts, hours, money). */
export type Column = string | { label: string; num: true };

/**
 * One console list: loading, error and empty states of a keyset-paginated query, then a table of its rows and a
 * "Load more" button while the server has a next page. `row` returns the whole `<tr>` (with its key). On a phone each
 * row is a small card, each cell under its column's name (./columnLabels.ts), so no cell, and no action button, is
 * left past the screen's edge.
 */
export function KeysetTable<T>({ result, what, empty, caption, columns, row }: {
  result: Paged<T>;
  what: string;
  empty: string;
  caption: string;
  columns: Column[];
  row(item: T): ReactNode;
}) {
  const table = useColumnLabels(columns.map((c) => (typeof c === 'string' ? c : c.label)));
  if (result.isPending) return <div className={styles.state}><Spinner label={`Loading ${what}`} /></div>;
  if (result.isError) {
    return (
      <div className={styles.state} role="alert">
        <p>We couldn&apos;t load the {what}: {result.error.message}</p>
        <button type="button" className={styles.small} onClick={() => void result.refetch()}>
          Try again
        </button>
      </div>
    );
  }
  const items = result.data.pages.flatMap((p) => p.items);
  if (!items.length) return <p className={styles.state}>{empty}</p>;
  return (
    <>
      <div className={styles.tableWrap}>
        <table ref={table} className={`${styles.table} ${styles.cards}`}>
          <caption className="sr-only">{caption}</caption>
          <thead>
            <tr>
              {columns.map((c) =>
                typeof c === 'string' ? (
                  <th key={c} scope="col">{c}</th>
                ) : (
                  <th key={c.label} scope="col" className={styles.num}>{c.label}</th>
                ),
              )}
            </tr>
          </thead>
          <tbody>{items.map(row)}</tbody>
        </table>
      </div>
      {result.hasNextPage ? (
        <div className={styles.more}>
          <button type="button" className={styles.small} disabled={result.isFetchingNextPage} onClick={() => void result.fetchNextPage()}>
            {result.isFetchingNextPage ? 'Loading…' : 'Load more'}
          </button>
        </div>
      ) : null}
    </>
  );
}
