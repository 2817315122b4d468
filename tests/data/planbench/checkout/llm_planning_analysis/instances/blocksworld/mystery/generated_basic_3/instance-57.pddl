

(define (problem MY-rand-3)
(:domain mystery-4ops)
(:objects a b c )
(:init
(harmony)
(craves a c)
(craves b a)
(planet c)
(province b)
)
(:goal
(and
(craves a b)
(craves b c))
)
)


