import { HelpEmail } from '../../lib/HelpEmail';
import { SetupFaq } from '../Setup/SetupFaq';
import styles from './Dashboard.module.css';

export function DashboardSidebar() {
  return (
    <div className={styles.sidebar}>
      <SetupFaq compact />
      <section className={styles.helpBox} aria-label="Help">
        <HelpEmail className={styles.helpText} lead="Questions about your machine? Write to us at" />
      </section>
    </div>
  );
}
