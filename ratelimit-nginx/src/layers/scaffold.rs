//! What the `limit_req` and `limit_conn` layers are besides their
//! decision: the builder methods over their [`Settings`](super::settings::Settings)
//! and policy (`shared_builders!`), the `Layer` that wraps a service, the
//! service type itself and its accessors. `layer_scaffold!` writes them for
//! one pair; each layer's file keeps only its fields and its `call`.

/// Writes, for the layer type `$layer` (with `policy` and `settings`
/// fields), the shared builder methods, `impl Layer<S>`, and the service
/// type `$service<S>` (`inner`, `layer`) with its accessors; `$directive`
/// names the module in the docs.
macro_rules! layer_scaffold {
    ($layer:ident, $service:ident, $directive:literal) => {
        $crate::layers::settings::shared_builders!($layer);

        impl<S> tower_layer::Layer<S> for $layer {
            type Service = $service<S>;

            fn layer(&self, inner: S) -> Self::Service {
                $service {
                    inner,
                    layer: self.clone(),
                }
            }
        }

        #[doc = concat!("The `", $directive, "` service; see [`", stringify!($layer), "`].")]
        #[derive(Clone, Debug)]
        pub struct $service<S> {
            inner: S,
            layer: $layer,
        }

        ratelimit_core::inner_accessors!(impl<S> $service<S> { mut inner: S } "inner service");
    };
}

pub(crate) use layer_scaffold;
