/* libflexiblas_taihu.so: taihu as a FlexiBLAS backend (FLEXIBLAS=taihu, or
 * FLEXIBLAS=/path/libflexiblas_taihu.so). FlexiBLAS looks every BLAS routine up with
 * dlsym() on the backend's handle, which searches this library and then its
 * dependencies in link order: libtaihu_blas.so first (the level-3 routines, batched
 * GEMM, bf16 GEMM and the thread control that FlexiBLAS's flexiblas_set_num_threads
 * calls), then the system BLAS (libblas.so.3, whichever the alternatives system picks)
 * for every other routine. The library itself defines only its name: a backend must
 * resolve the whole reference BLAS, since FlexiBLAS probes routines taihu lacks
 * (zdotc_, sdot_) while loading it. */
const char taihu_flexiblas_backend_name[] = "taihu";
