//! `inner_accessors!`: the `get_ref` / `get_mut` / `into_inner` of a
//! wrapper (a tower service or layer around another), written once for the
//! workspace's wrappers (`ratelimit-tower`'s `RateLimit`, `SetClientIp`,
//! `AxumLayer`, `AxumRateLimit`; `ratelimit-nginx`'s `LimitReq`,
//! `LimitConn`).

/// Writes `get_ref` and `into_inner` (and, with `mut` before the field,
/// `get_mut`) of a wrapper over the field named, as
/// `inner_accessors!(impl<S> Wrapper<S> { mut inner: S } "service")`;
/// the last argument names what is wrapped in the docs.
///
/// # Examples
///
/// ```
/// pub struct Wrapper<S> {
///     inner: S,
/// }
/// ratelimit_core::inner_accessors!(impl<S> Wrapper<S> { mut inner: S } "service");
///
/// let mut w = Wrapper { inner: 1 };
/// *w.get_mut() += 1;
/// assert_eq!((*w.get_ref(), w.into_inner()), (2, 2));
/// ```
#[macro_export]
#[doc(hidden)]
macro_rules! inner_accessors {
    (impl<$($g:ident),*> $ty:ty { mut $field:ident: $inner:ty } $what:literal) => {
        $crate::inner_accessors!(impl<$($g),*> $ty { $field: $inner } $what);

        impl<$($g),*> $ty {
            #[doc = concat!("The ", $what, " it wraps, mutably.")]
            pub fn get_mut(&mut self) -> &mut $inner {
                &mut self.$field
            }
        }
    };
    (impl<$($g:ident),*> $ty:ty { $field:ident: $inner:ty } $what:literal) => {
        impl<$($g),*> $ty {
            #[doc = concat!("The ", $what, " it wraps.")]
            pub fn get_ref(&self) -> &$inner {
                &self.$field
            }

            #[doc = concat!("Unwraps the ", $what, ".")]
            pub fn into_inner(self) -> $inner {
                self.$field
            }
        }
    };
}
