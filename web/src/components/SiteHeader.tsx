import { lazy, Suspense, useEffect, useId, useState } from 'react';
import { Link, NavLink, useLocation } from 'react-router';
import { useAuth } from '../auth/AuthProvider';
import { closeAuthDialog, openAuthDialog, useAuthDialog } from '../auth/dialogs';
import { initials } from '../auth/initials';
import styles from './SiteHeader.module.css';

// Popups and the menu load on demand: the landing page's first load carries only the header itself.
const loadLogin = () => import('./LoginDialog');
const loadSignup = () => import('./SignupDialog');
const loadForgot = () => import('./ForgotPasswordDialog');
const loadContact = () => import('./ContactDialog');
const LoginDialog = lazy(() => loadLogin().then((m) => ({ default: m.LoginDialog })));
const SignupDialog = lazy(() => loadSignup().then((m) => ({ default: m.SignupDialog })));
const ForgotPasswordDialog = lazy(() => loadForgot().then((m) => ({ default: m.ForgotPasswordDialog })));
const ContactDialog = lazy(() => loadContact().then((m) => ({ default: m.ContactDialog })));
const UserMenu = lazy(() => import('./UserMenu').then((m) => ({ default: m.UserMenu })));

const LINKS = [
  { to: '/HyperRender', label: 'HyperRender' },
  { to: '/SwiftShader', label: 'SwiftShader' },
  { to: '/faqs', label: 'FAQs' },
];

/** Site header (spec §2 Landing header): product links, Contact Us, and Login/Sign Up or Dashboard + user menu. */
export function SiteHeader() {
  const { status, user } = useAuth();
  const [menuOpen, setMenuOpen] = useState(false);
  const [contactOpen, setContactOpen] = useState(false);
  const menuId = useId();
  const { pathname } = useLocation();
  const [menuPath, setMenuPath] = useState(pathname);
  if (menuPath !== pathname) {
    // Navigating closes the small-screen menu.
    setMenuPath(pathname);
    setMenuOpen(false);
  }

  const open = (name: 'login' | 'signup') => {
    setMenuOpen(false);
    openAuthDialog(name);
  };
  const openContact = () => {
    setMenuOpen(false);
    setContactOpen(true);
  };

  const navLinks = LINKS.map((l) => (
    <NavLink key={l.to} to={l.to} className={({ isActive }) => (isActive ? `${styles.link} ${styles.active}` : styles.link)}>
      {l.label}
    </NavLink>
  ));
  const contact = (
    <button type="button" className={styles.link} onClick={openContact} onPointerEnter={() => void loadContact()}>
      Contact Us
    </button>
  );
  const account =
    status === 'signedOut' ? (
      <>
        <button type="button" className={styles.ghost} onClick={() => open('login')} onPointerEnter={() => void loadLogin()}>
          Login
        </button>
        <button type="button" className={styles.primary} onClick={() => open('signup')} onPointerEnter={() => void loadSignup()}>
          Sign Up
        </button>
      </>
    ) : status === 'signedIn' ? (
      <NavLink to="/dashboard" className={styles.primary}>
        Dashboard
      </NavLink>
    ) : null;

  return (
    <header className={styles.header}>
      <div className={styles.inner}>
        <Link to="/" className={styles.logo} aria-label="Hyperdesk home">
          <svg className={styles.mark} viewBox="0 0 32 32" aria-hidden="true" focusable="false">
            <rect width="32" height="32" rx="8" fill="currentColor" />
            <path d="M9 9v14M23 9v14M9 16h14" stroke="#fff" strokeWidth="3" strokeLinecap="round" />
          </svg>
          <span>Hyperdesk</span>
        </Link>
        <nav className={styles.nav} aria-label="Main">
          {navLinks}
          {contact}
        </nav>
        <div className={styles.actions}>
          <div className={styles.wide}>{account}</div>
          {status === 'signedIn' && user ? (
            <Suspense fallback={<span className={styles.avatarStub} aria-hidden="true">{initials(user.displayName)}</span>}>
              <UserMenu user={user} />
            </Suspense>
          ) : null}
          <button
            type="button"
            className={styles.menuButton}
            aria-expanded={menuOpen}
            aria-controls={menuId}
            aria-label={menuOpen ? 'Close menu' : 'Open menu'}
            onClick={() => setMenuOpen((o) => !o)}
          >
            <svg viewBox="0 0 24 24" width="22" height="22" aria-hidden="true" focusable="false">
              {menuOpen ? (
                <path d="M6 6l12 12M18 6L6 18" stroke="currentColor" strokeWidth="2" strokeLinecap="round" />
              ) : (
                <path d="M4 7h16M4 12h16M4 17h16" stroke="currentColor" strokeWidth="2" strokeLinecap="round" />
              )}
            </svg>
          </button>
        </div>
      </div>
      <div id={menuId} className={styles.panel} hidden={!menuOpen}>
        <nav className={styles.panelNav} aria-label="Main">
          {navLinks}
          {contact}
        </nav>
        <div className={styles.panelActions}>{account}</div>
      </div>
      <AuthDialogs />
      {contactOpen ? (
        <Suspense fallback={null}>
          <ContactDialog open onOpenChange={setContactOpen} source="contact" />
        </Suspense>
      ) : null}
    </header>
  );
}

/** Renders the account popup that is open (see auth/dialogs.ts). */
function AuthDialogs() {
  const dialog = useAuthDialog();
  useEffect(() => closeAuthDialog, []);
  const onOpenChange = (o: boolean) => {
    if (!o) closeAuthDialog();
  };
  return (
    <Suspense fallback={null}>
      {dialog === 'login' ? <LoginDialog open onOpenChange={onOpenChange} /> : null}
      {dialog === 'signup' ? <SignupDialog open onOpenChange={onOpenChange} /> : null}
      {dialog === 'forgot' ? <ForgotPasswordDialog open onOpenChange={onOpenChange} /> : null}
    </Suspense>
  );
}
