// SPDX-License-Identifier: MIT
/*
 * registry.c - dead-writer detection for logs shared by several processes.
 *
 * Each writer process owns one registry slot for its life: it holds an OFD
 * write lock (F_OFD_SETLK) on that slot's byte in the file's lock area. The
 * kernel drops the lock when the last descriptor of that open file
 * description closes - at the latest when the process dies, even by SIGKILL,
 * and before it is reaped. So "lock byte free" means the owner is gone;
 * unlike kill(pid, 0) this is immune to pid reuse and pid namespaces. The slot's
 * generation changes with every new owner, and every record also names its
 * writer's pid, so an owner code never names the next process that takes the
 * slot, even after the 6-bit generation wraps.
 *
 * One caveat: a process that closes the file while it keeps writing through
 * the mapping (a daemon that closes every descriptor) loses its lock. Hence a
 * free lock is confirmed by the pid: a process that still exists (and is
 * not a zombie) is taken as alive.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log/registry.h"

static int lock_byte(int fd, int cmd, short type, off_t off, struct flock *out)
{
	struct flock fl;

	memset(&fl, 0, sizeof(fl));
	fl.l_type = type;
	fl.l_whence = SEEK_SET;
	fl.l_start = off;
	fl.l_len = 1;
	int err = fcntl(fd, cmd, &fl) < 0 ? -errno : 0;

	if (out)
		*out = fl; /* always set: a caller may read it whatever errno said */
	return err;
}

void pk_registry_own_name(char name[16])
{
	const char *s = program_invocation_short_name;
	size_t n = s ? strnlen(s, 15) : 0;

	memset(name, 0, 16);
	memcpy(name, s ? s : "", n);
}

/* Our name into @e, the previous writer's moved to the second place. A
 * reader matches a name by its pid, which is zero while the name it goes
 * with changes. */
static void store_name(struct pk_registry_entry *e)
{
	char name[16];
	uint64_t w[2];
	uint32_t old = atomic_load(&e->name_pid);

	if (old && old != (uint32_t)getpid()) {
		atomic_store(&e->prev_pid, 0);
		atomic_store(&e->prev_comm[0], atomic_load(&e->comm[0]));
		atomic_store(&e->prev_comm[1], atomic_load(&e->comm[1]));
		atomic_store(&e->prev_pid, old);
	}
	atomic_store(&e->name_pid, 0);
	pk_registry_own_name(name);
	memcpy(w, name, sizeof(w));
	atomic_store(&e->comm[0], w[0]);
	atomic_store(&e->comm[1], w[1]);
	atomic_store(&e->name_pid, (uint32_t)getpid());
}

/* @e's name for @pid, if it has one: 1 and its attach time in *@ns. */
static int entry_name(struct pk_registry_entry *e, uint32_t pid, char name[16], uint64_t *ns)
{
	uint64_t w[2];

	if (atomic_load_explicit(&e->name_pid, memory_order_acquire) == pid) {
		w[0] = atomic_load_explicit(&e->comm[0], memory_order_relaxed);
		w[1] = atomic_load_explicit(&e->comm[1], memory_order_relaxed);
		*ns = atomic_load_explicit(&e->attach_ns, memory_order_relaxed);
	} else if (atomic_load_explicit(&e->prev_pid, memory_order_acquire) == pid) {
		w[0] = atomic_load_explicit(&e->prev_comm[0], memory_order_relaxed);
		w[1] = atomic_load_explicit(&e->prev_comm[1], memory_order_relaxed);
		*ns = 0; /* older than any current entry */
	} else {
		return 0;
	}
	/* A writer taking the slot zeroes the pid before it changes a name:
	 * a pid still there after the read means the name read is its own. */
	pk_fence_acquire();
	if (!w[0] || (atomic_load_explicit(&e->name_pid, memory_order_acquire) != pid &&
		      atomic_load_explicit(&e->prev_pid, memory_order_acquire) != pid))
		return 0;
	memcpy(name, w, 16);
	name[15] = '\0';
	return 1;
}

int pk_registry_name(struct pk_registry *reg, uint32_t pid, char name[16])
{
	uint64_t best_ns = 0;
	int found = -ENOENT;

	if (!reg->entries || (reg->lost && atomic_load(reg->lost)))
		return -ENOENT;
	for (unsigned slot = 1; slot < reg->nentries; slot++) {
		char cand[16];
		uint64_t ns;

		if (!entry_name(&reg->entries[slot], pid, cand, &ns) || (found == 0 && ns < best_ns))
			continue;
		memcpy(name, cand, 16);
		best_ns = ns;
		found = 0;
	}
	return found;
}

int pk_registry_register(struct pk_registry *reg)
{
	for (unsigned slot = 1; slot < reg->nentries; slot++) {
		int err = lock_byte(reg->fd, F_OFD_SETLK, F_WRLCK, (off_t)(reg->lock_off + slot), NULL);

		if (err == -EAGAIN || err == -EACCES)
			continue; /* a live writer holds it */
		if (err)
			return err;

		struct pk_registry_entry *e = &reg->entries[slot];
		struct timespec now;
		uint32_t gen = atomic_fetch_add(&e->gen, 1) + 1;

		clock_gettime(CLOCK_REALTIME, &now);
		store_name(e);
		atomic_store(&e->pid, (uint32_t)getpid());
		atomic_store(&e->attach_ns, (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec);
		return (int)(slot << PK_REGISTRY_GEN_BITS | (gen & ((1u << PK_REGISTRY_GEN_BITS) - 1)));
	}
	return -EUSERS;
}

/* A zombie (exited, not yet reaped) still answers kill(pid, 0). */
static int is_zombie(uint32_t pid)
{
	char path[64], buf[256];
	int fd, n;

	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = (int)read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';

	/* "pid (comm) S ...": the state follows the last ')'. */
	char *paren = strrchr(buf, ')');

	return paren && paren[1] == ' ' && paren[2] == 'Z';
}

int pk_registry_owner_alive(struct pk_registry *reg, unsigned owner, uint32_t record_pid)
{
	unsigned genmask = (1u << PK_REGISTRY_GEN_BITS) - 1;
	unsigned slot = owner >> PK_REGISTRY_GEN_BITS, gen = owner & genmask;

	if (reg->lost && atomic_load(reg->lost))
		return 1; /* a ring of our own now: its writers are our threads */
	if (slot == 0 || slot >= reg->nentries)
		return 0; /* not a writer code we could have handed out */

	struct pk_registry_entry *e = &reg->entries[slot];

	if ((atomic_load(&e->gen) & genmask) != gen)
		return 0; /* the slot has a new owner: the old one died */

	uint32_t pid = atomic_load(&e->pid);

	if (pid != record_pid)
		return 0; /* the generation wrapped: a later owner of the slot */

	if (pid == (uint32_t)getpid())
		return 1; /* never reclaim our own: it may be the code this handler interrupted */

	struct flock fl = { .l_type = F_WRLCK };
	int saved = errno;
	int err = lock_byte(reg->fd, F_OFD_GETLK, F_WRLCK, (off_t)(reg->lock_off + slot), &fl);
	int alive;

	if (err)
		alive = 1; /* cannot tell: do not reclaim */
	else if (fl.l_type != F_UNLCK)
		alive = 1;
	else if (kill((pid_t)pid, 0) < 0 && errno == ESRCH)
		alive = 0;
	else
		alive = !is_zombie(pid);
	errno = saved;
	return alive;
}

int pk_registry_pid_writes(struct pk_registry *reg, uint32_t pid, unsigned my_owner)
{
	unsigned genmask = (1u << PK_REGISTRY_GEN_BITS) - 1;
	unsigned mine = my_owner >> PK_REGISTRY_GEN_BITS;

	for (unsigned slot = 1; slot < reg->nentries; slot++) {
		struct pk_registry_entry *e = &reg->entries[slot];

		if (slot == mine || atomic_load(&e->gen) == 0 || atomic_load(&e->pid) != pid)
			continue;

		struct flock fl;

		if (lock_byte(reg->fd, F_OFD_GETLK, F_WRLCK, (off_t)(reg->lock_off + slot), &fl) ||
		    fl.l_type != F_UNLCK)
			return 1; /* held (another process, or another handle of ours) */
		if (pid != (uint32_t)getpid() &&
		    pk_registry_owner_alive(reg, slot << PK_REGISTRY_GEN_BITS |
							 (atomic_load(&e->gen) & genmask),
					    pid))
			return 1; /* lock dropped, process still there */
	}
	return 0;
}
