import * as Menu from '@radix-ui/react-dropdown-menu';
import { useQueryClient } from '@tanstack/react-query';
import { useNavigate } from 'react-router';
import type { User } from '@hyperdesk/contract';
import { signOut } from '../auth/actions';
import { initials } from '../auth/initials';
import styles from './UserMenu.module.css';

/** Avatar button with the account menu (spec §2 Shared elements): Account Details and Logout. */
export function UserMenu({ user }: { user: User }) {
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const logout = async () => {
    await signOut();
    queryClient.clear();
    navigate('/', { replace: true });
  };
  return (
    <Menu.Root modal={false}>
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
          <Menu.Item className={styles.item} onSelect={() => void logout()}>
            Logout
          </Menu.Item>
        </Menu.Content>
      </Menu.Portal>
    </Menu.Root>
  );
}
