import { useEffect, useSyncExternalStore } from 'react';
import * as Menu from '@radix-ui/react-dropdown-menu';
import { useQueryClient } from '@tanstack/react-query';
import { useNavigate } from 'react-router';
import type { User } from '@hyperdesk/contract';
import { signOut } from '../auth/actions';
import { initials } from '../auth/initials';
import styles from './UserMenu.module.css';

/**
 * Whether the menu is open, kept outside the component (issue 11.7). Every page renders its own header, and the
 * router swaps pages in a transition: the old page stays on screen until the next page's code has loaded. A click
 * on the avatar in that window used to open the old header's menu, which then vanished with the old page; now the
 * next page's header mounts with the menu still open. It closes when no menu is mounted any more (signed out).
 */
let open = false;
let mounted = 0;
const listeners = new Set<() => void>();
const setOpen = (o: boolean) => {
  if (open === o) return;
  open = o;
  listeners.forEach((fn) => fn());
};
const subscribe = (fn: () => void) => {
  listeners.add(fn);
  return () => void listeners.delete(fn);
};

function useMenuOpen(): boolean {
  useEffect(() => {
    mounted += 1;
    return () => {
      mounted -= 1;
      // A page swap unmounts one header and mounts the next in the same commit; only a real removal closes.
      setTimeout(() => {
        if (mounted === 0) setOpen(false);
      }, 0);
    };
  }, []);
  return useSyncExternalStore(subscribe, () => open, () => false);
}

/** Avatar button with the account menu (spec §2 Shared elements): Account Details and Logout. */
export function UserMenu({ user }: { user: User }) {
  const isOpen = useMenuOpen();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const logout = async () => {
    await signOut();
    queryClient.clear();
    navigate('/', { replace: true });
  };
  return (
    <Menu.Root modal={false} open={isOpen} onOpenChange={setOpen}>
      <Menu.Trigger className={styles.avatar}>
        <span aria-hidden="true" data-initials>
          {initials(user.displayName || user.email)}
        </span>
        <span className="sr-only">Account menu for {user.displayName || user.email}</span>
      </Menu.Trigger>
      <Menu.Portal>
        <Menu.Content className={styles.content} align="end" sideOffset={8}>
          <div className={styles.who}>
            <span className={styles.name}>{user.displayName}</span>
            <span className={styles.email}>{user.email}</span>
          </div>
          <Menu.Separator className={styles.sep} />
          <Menu.Item className={styles.item} onSelect={() => navigate('/profile')}>
            Account Details
          </Menu.Item>
          <Menu.Item className={styles.item} onSelect={() => navigate('/receipts')}>
            Receipts
          </Menu.Item>
          {user.admin ? (
            <Menu.Item className={styles.item} onSelect={() => navigate('/admin')}>
              Operator Console
            </Menu.Item>
          ) : null}
          <Menu.Item className={styles.item} onSelect={() => void logout()}>
            Logout
          </Menu.Item>
        </Menu.Content>
      </Menu.Portal>
    </Menu.Root>
  );
}
