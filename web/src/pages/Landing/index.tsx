import type { ReactNode } from 'react';
import { SiteHeader } from '../../components/SiteHeader';
import { SiteFooter } from '../../components/SiteFooter';
import { usePageMeta } from '../../content/meta';
import { HeroArt, Icon, type IconName } from './art';
import { GetStarted } from './GetStarted';
import { useAuthLink } from './useAuthLink';
import styles from './Landing.module.css';

const TITLE = 'Hyperdesk — Unreal Engine cloud machines in your browser';
const DESCRIPTION =
  'Rent a high-end GPU desktop with Unreal Engine by the hour and use it from Chrome on any computer. A stable 2 mbps connection is all you need; your machine is ready within 5 minutes of payment.';

const FEATURES: { icon: IconName; title: string; text: string }[] = [
  { icon: 'gpu', title: 'A real GPU workstation', text: 'Nvidia T4 with 16 GB of video memory, 4 CPU cores and 16 GB of RAM, with Unreal Engine installed and ready to open.' },
  { icon: 'browser', title: 'Nothing to install', text: 'The desktop streams into a Chrome tab. Work from a laptop, a Chromebook or a lab PC; your own hardware does not matter.' },
  { icon: 'clock', title: 'Ready within 5 minutes', text: 'Pay and your machine is set up within 5 minutes. Later starts take about 3 to 5 minutes, with a countdown on your dashboard.' },
  { icon: 'hours', title: 'Pay for hours, not hardware', text: 'Buy a monthly pack of runtime hours, counted by the minute only while the machine runs. Top up anytime.' },
  { icon: 'folder', title: 'Your work stays put', text: 'Stopping a machine keeps its home folder, so your projects are there when you come back.' },
  { icon: 'shield', title: 'Stops when you forget', text: 'After 20 minutes without use the machine stops on its own, with a warning 5 minutes before, so idle time never eats your hours.' },
];

const STEPS = [
  { title: 'Choose country and platform', text: 'Germany, India, Spain or the United Kingdom, prices in your currency. Unreal Engine comes preinstalled.' },
  { title: 'Pick your hours and pay', text: 'Select a monthly pack of runtime hours and pay by card on a secure checkout page.' },
  { title: 'Start and connect', text: 'Press Start Machine on your dashboard, then Connect: your desktop opens in a new Chrome tab.' },
];

const USE_CASES: { id: string; icon: IconName; title: string; lead: string; points: string[] }[] = [
  {
    id: 'training',
    icon: 'class',
    title: 'Training',
    lead: 'Teach Unreal Engine without a GPU lab.',
    points: [
      'One machine per student, for 1 to 40 concurrent students',
      'Start and stop every machine of the course at once',
      'Upload your class list; students sign in and connect',
    ],
  },
  {
    id: 'production',
    icon: 'film',
    title: 'Production',
    lead: 'Build, light and render on a machine that keeps up.',
    points: [
      'Bake lighting and render sequences on a dedicated GPU',
      'Package and test builds away from your everyday computer',
      'Add hours for crunch weeks, none to pay for in quiet ones',
    ],
  },
  {
    id: 'practicing',
    icon: 'spark',
    title: 'Practicing',
    lead: 'Learn at your own pace, from the computer you have.',
    points: [
      'Follow courses and tutorials on a machine that runs them smoothly',
      'Pick up where you left off: your projects are kept',
      'Start small with a few hours and top up when you need more',
    ],
  },
];

/** The landing page (spec §2 Landing): hero, features, use cases and the call to action. */
export default function Landing() {
  usePageMeta(TITLE, DESCRIPTION);
  useAuthLink();
  return (
    <div className={styles.page}>
      <SiteHeader />
      <main id="main">
        <section className={styles.hero} aria-labelledby="hero-title">
          <div className={styles.heroInner}>
            <div className={styles.heroText}>
              <p className={styles.eyebrow}>Cloud GPU desktops for Unreal Engine</p>
              <h1 id="hero-title" className={styles.heroTitle}>
                A high-end Unreal Engine machine, right in your browser
              </h1>
              <p className={styles.heroLead}>
                Rent a powerful cloud desktop by the hour and use it from Chrome on any computer. All you need is a stable
                2&nbsp;mbps connection, and your machine is ready within 5&nbsp;minutes of payment.
              </p>
              <div className={styles.heroActions}>
                <GetStarted className={styles.primary} />
                <a className={styles.secondary} href="#how-it-works">
                  How it works
                </a>
              </div>
              <ul className={styles.facts} aria-label="What you need">
                <li><Icon name="browser" /> Google Chrome</li>
                <li><Icon name="wifi" /> 2 mbps connection</li>
                <li><Icon name="clock" /> Ready in 5 minutes</li>
              </ul>
            </div>
            <HeroArt className={styles.heroArt} />
          </div>
        </section>

        <Section id="features" title="Everything a 3D workstation gives you, minus the workstation" intro="Hyperdesk runs Unreal Engine on dedicated GPU machines in the cloud and streams the desktop to your browser.">
          <ul className={styles.features}>
            {FEATURES.map((f) => (
              <li key={f.title} className={styles.card}>
                <span className={styles.cardIcon}><Icon name={f.icon} /></span>
                <h3>{f.title}</h3>
                <p>{f.text}</p>
              </li>
            ))}
          </ul>
        </Section>

        <Section id="how-it-works" title="Up and running in three steps" tone="alt">
          <ol className={styles.steps}>
            {STEPS.map((s, i) => (
              <li key={s.title} className={styles.step}>
                <span className={styles.stepNumber} aria-hidden="true">{i + 1}</span>
                <h3>{s.title}</h3>
                <p>{s.text}</p>
              </li>
            ))}
          </ol>
        </Section>

        <Section id="use-cases" title="Made for the way you work with Unreal Engine" intro="Whether you teach a class, ship a project or are just starting out.">
          <div className={styles.useCases}>
            {USE_CASES.map((u) => (
              <article key={u.id} id={u.id} className={styles.useCase} aria-labelledby={`${u.id}-title`}>
                <span className={styles.cardIcon}><Icon name={u.icon} /></span>
                <h3 id={`${u.id}-title`}>{u.title}</h3>
                <p className={styles.useLead}>{u.lead}</p>
                <ul className={styles.checks}>
                  {u.points.map((p) => (
                    <li key={p}><Icon name="check" /> {p}</li>
                  ))}
                </ul>
              </article>
            ))}
          </div>
        </Section>

        <section className={styles.cta} aria-labelledby="cta-title">
          <div className={styles.ctaInner}>
            <div>
              <h2 id="cta-title" className={styles.ctaTitle}>Skip the $2,500 upgrade</h2>
              <p className={styles.ctaLead}>
                Upgrading a computer for Unreal Engine costs $2,500 on average. With Hyperdesk you pay roughly 4% of that,
                about $100, for the hours you actually use.
              </p>
              <ul className={styles.ctaFacts}>
                <li><Icon name="check" /> Works in Chrome on the computer you already own</li>
                <li><Icon name="check" /> A stable 2 mbps connection is enough</li>
                <li><Icon name="check" /> Your machine is ready within 5 minutes of payment</li>
              </ul>
              <GetStarted className={`${styles.primary} ${styles.primaryLight}`} />
            </div>
            <figure className={styles.compare} aria-labelledby="compare-caption">
              <figcaption id="compare-caption" className={styles.compareCaption}>What it costs to work in Unreal Engine</figcaption>
              <CostBar label="Upgrading your computer" amount="$2,500" share={100} />
              <CostBar label="Hyperdesk" amount="≈ $100" share={4} highlight />
              <p className={styles.compareNote}>Hyperdesk costs roughly 4% of the average upgrade.</p>
            </figure>
          </div>
        </section>
      </main>
      <SiteFooter />
    </div>
  );
}

function Section({ id, title, intro, tone, children }: { id: string; title: string; intro?: string; tone?: 'alt'; children: ReactNode }) {
  return (
    <section id={id} className={tone === 'alt' ? `${styles.section} ${styles.alt}` : styles.section} aria-labelledby={`${id}-title`}>
      <div className={styles.sectionInner}>
        <h2 id={`${id}-title`} className={styles.sectionTitle}>{title}</h2>
        {intro ? <p className={styles.sectionIntro}>{intro}</p> : null}
        {children}
      </div>
    </section>
  );
}

function CostBar({ label, amount, share, highlight = false }: { label: string; amount: string; share: number; highlight?: boolean }) {
  return (
    <div className={styles.bar}>
      <div className={styles.barHead}>
        <span>{label}</span>
        <strong>{amount}</strong>
      </div>
      <div className={styles.barTrack} aria-hidden="true">
        <div className={highlight ? `${styles.barFill} ${styles.barFillHi}` : styles.barFill} style={{ width: `${Math.max(share, 4)}%` }} />
      </div>
    </div>
  );
}
