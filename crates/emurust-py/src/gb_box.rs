//! The heap slot that holds a `GameBoy`'s core, shared with the objects whose CPython slot
//! functions read it without pyo3's borrow machinery (`pyboy_memory.rs`).
//!
//! The slot never moves and lives as long as its `GameBoy` Python object; those objects keep a
//! strong reference to it. Every access happens with the GIL held, so only the calls that
//! release the GIL (or may run Python code) while they use the core need to say so: they mark
//! the slot busy, and the slot functions then raise the same "in use by another thread" error
//! as the pyo3 methods.

use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, Ordering};

use emurust_core::GameBoy as CoreGameBoy;

pub(crate) struct GbSlot {
    pub(crate) gb: CoreGameBoy,
    busy: AtomicBool,
}

impl GbSlot {
    /// True while a call that released the GIL (tick, run_to_break) is using the core.
    #[inline(always)]
    pub(crate) fn is_busy(&self) -> bool {
        self.busy.load(Ordering::Relaxed)
    }
}

/// Owner of a `GbSlot` (a `Box` in all but name: a raw allocation, so that the slot functions'
/// raw pointers to it stay valid next to the owner's `&mut` uses, which never overlap them in
/// time: the GIL orders them and the busy mark covers the GIL-released sections).
pub(crate) struct GbBox(NonNull<GbSlot>);

// SAFETY: the slot is owned uniquely by this box; the raw pointers handed out by `slot_ptr` are
// used only with the GIL held (see the module comment).
unsafe impl Send for GbBox {}
// SAFETY: as `Box<GameBoy>`: shared access gives only `&GameBoy`; the busy mark is atomic.
unsafe impl Sync for GbBox {}

impl GbBox {
    pub(crate) fn new(gb: CoreGameBoy) -> Self {
        let slot = Box::new(GbSlot {
            gb,
            busy: AtomicBool::new(false),
        });
        GbBox(NonNull::from(Box::leak(slot)))
    }

    /// The slot, for objects that keep the owning Python object alive.
    pub(crate) fn slot_ptr(&self) -> *mut GbSlot {
        self.0.as_ptr()
    }

    /// Marks the slot busy until the guard drops.
    pub(crate) fn busy_guard(&self) -> BusyGuard {
        // SAFETY: the slot lives as long as this box; only the flag's field is referenced (the
        // core may be borrowed mutably meanwhile).
        unsafe { &(*self.0.as_ptr()).busy }.store(true, Ordering::Relaxed);
        BusyGuard(self.0)
    }
}

impl Drop for GbBox {
    fn drop(&mut self) {
        // SAFETY: allocated by `Box::new` in `new`, dropped once.
        drop(unsafe { Box::from_raw(self.0.as_ptr()) });
    }
}

impl Deref for GbBox {
    type Target = CoreGameBoy;
    #[inline(always)]
    fn deref(&self) -> &CoreGameBoy {
        // SAFETY: valid for the box's lifetime.
        unsafe { &(*self.0.as_ptr()).gb }
    }
}

impl DerefMut for GbBox {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut CoreGameBoy {
        // SAFETY: valid for the box's lifetime; `&mut self` is the owner's unique use.
        unsafe { &mut (*self.0.as_ptr()).gb }
    }
}

/// Clears the busy mark when dropped (also when the guarded call fails or unwinds).
pub(crate) struct BusyGuard(NonNull<GbSlot>);

impl Drop for BusyGuard {
    fn drop(&mut self) {
        // SAFETY: the guard never outlives the call that holds the box.
        unsafe { &(*self.0.as_ptr()).busy }.store(false, Ordering::Relaxed);
    }
}
