import { useEffect, type ReactNode } from 'react';
import { SiteHeader } from './SiteHeader';
import styles from './AppLayout.module.css';

export interface AppLayoutProps {
  children: ReactNode;
  /** Page heading (h1) above the content; also sets the document title. */
  title?: string;
  /** Optional aside shown beside the content on wide screens and below it on small ones. */
  sidebar?: ReactNode;
}

/** Layout of the signed-in pages: the site header, a centred main column and an optional sidebar. */
export function AppLayout({ children, title, sidebar }: AppLayoutProps) {
  useEffect(() => {
    if (title) document.title = `${title} · Hyperdesk`;
  }, [title]);
  return (
    <div className={styles.shell}>
      <SiteHeader />
      <div className={sidebar ? `${styles.container} ${styles.withSidebar}` : styles.container}>
        <main className={styles.main} id="main">
          {title ? <h1 className={styles.title}>{title}</h1> : null}
          {children}
        </main>
        {sidebar ? <aside className={styles.sidebar}>{sidebar}</aside> : null}
      </div>
    </div>
  );
}
