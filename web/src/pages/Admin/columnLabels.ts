import { useLayoutEffect, useRef } from 'react';

/**
 * A console table's ref that gives each body cell its column's name as `data-label` after every render: on a phone
 * (Admin.module.css `.cards`) the rows are cards and each cell shows that name above its value, the headings being
 * hidden. The rows are the callers' own `<tr>`s, so the names are set here rather than by each of them.
 */
export function useColumnLabels(labels: readonly string[]) {
  const table = useRef<HTMLTableElement>(null);
  useLayoutEffect(() => {
    for (const tr of table.current?.tBodies[0]?.rows ?? []) {
      for (const cell of tr.cells) cell.dataset.label = labels[cell.cellIndex] ?? '';
    }
  });
  return table;
}
